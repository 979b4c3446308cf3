import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import type { ContactStore } from '../contact-store.js';
import type { ContactRec } from '../model.js';
import { paginator, queryArray, queryBool, readPaging } from '../paging.js';
import { CONTACT_STATUSES } from '../contact-input.js';
import type { ContactView } from '../serialize.js';
import { noteFormFields } from '../note-form-fields.js';
import { notFound, SimError } from '../sim-error.js';
import { windowWithTies } from '../window-ties.js';

const READ = ['crm_read_contacts', 'crm_manage_contacts'];
const WRITE = ['crm_manage_contacts'];
const DELETE = ['crm_manage_contacts_delete'];

type SortKey = 'id' | 'email' | 'created_at' | 'updated_at' | 'first_name' | 'last_name' | 'status';
const SORTABLE: Record<SortKey, (c: ContactRec) => string | number> = {
  id: (c) => c.id,
  email: (c) => c.email.toLowerCase(),
  created_at: (c) => c.createdAt,
  updated_at: (c) => c.updatedAt,
  first_name: (c) => (c.firstName ?? '').toLowerCase(),
  last_name: (c) => (c.lastName ?? '').toLowerCase(),
  status: (c) => c.status,
};

/** Sort as each mode reads it; null key means "no ORDER BY" (real mode, unknown column: table order). */
function readSort(ctx: RouteCtx): { key: SortKey | null; desc: boolean } {
  const q = ctx.query;
  if (ctx.real) {
    // fluentcrm-2.9 ignores order_by/order_type and honours sort_by/sort_type.
    const by = q.get('sort_by');
    const type = (q.get('sort_type') ?? 'DESC').toUpperCase();
    if (by === null || by === '') return { key: 'id', desc: type !== 'ASC' };
    if (!(by in SORTABLE)) return { key: null, desc: false };
    return { key: by as SortKey, desc: type !== 'ASC' };
  }
  const by = q.get('order_by') ?? q.get('sort_by') ?? 'id';
  const type = (q.get('order_type') ?? q.get('sort_type') ?? 'DESC').toUpperCase();
  if (!['id', 'email', 'created_at'].includes(by)) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): order_by; use id, email or created_at (got "${by.slice(0, 40)}").`);
  if (type !== 'ASC' && type !== 'DESC') throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): order_type; use ASC or DESC.');
  return { key: by as SortKey, desc: type === 'DESC' };
}

function ids(values: string[], name: string, real: boolean): number[] {
  const out: number[] = [];
  for (const v of values) {
    const n = Number(v);
    if (Number.isInteger(n) && n > 0) out.push(n);
    else if (!real) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): ${name}; use integer ids.`);
  }
  return out;
}

/** Recent filtered or sorted listings' ids in order, per store, until its next write (`version`). */
const ORDERED_KEPT = 8;
const orderedCache = new WeakMap<ContactStore, Map<string, { version: number; ids: number[] }>>();

/**
 * The ids a filtered or sorted listing returns, in its order: computed once and kept until the
 * next contact write, so the pages of one listing cost a page each, not a pass over every contact
 * (and, sorted by a field, every record built and sorted) as the first one does.
 */
function orderedIds(store: ContactStore, key: string, compute: () => number[]): number[] {
  let kept = orderedCache.get(store);
  if (!kept) orderedCache.set(store, (kept = new Map()));
  const hit = kept.get(key);
  if (hit && hit.version === store.version) return hit.ids;
  const ids = compute();
  kept.delete(key);
  if (kept.size >= ORDERED_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(key, { version: store.version, ids });
  return ids;
}

function listContacts(ctx: RouteCtx): SimResponse {
  const paging = readPaging(ctx, 10);
  const sort = readSort(ctx);
  const q = ctx.query;
  let statuses = queryArray(q, 'statuses');
  const unknown = statuses.filter((s) => !(CONTACT_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    if (ctx.real) statuses = statuses.filter((s) => !unknown.includes(s));
    else throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): statuses; use ${CONTACT_STATUSES.join(', ')}.`);
  }
  const tags = ids(queryArray(q, 'tags'), 'tags', ctx.real);
  const lists = ids(queryArray(q, 'lists'), 'lists', ctx.real);
  const companies = ids(queryArray(q, 'company_ids'), 'company_ids', ctx.real);
  const search = (q.get('search') ?? '').trim().toLowerCase().slice(0, 200);
  const custom = queryBool(q, 'custom_fields');
  const view: ContactView = custom ? { customKey: ctx.real ? 'custom_fields' : 'custom_values' } : {};
  const store = ctx.state.contacts;
  const filtered = statuses.length > 0 || tags.length > 0 || lists.length > 0 || companies.length > 0 || search !== '';
  const offset = (paging.page - 1) * paging.perPage;
  let total: number;
  let page: ContactRec[];
  // created_at follows id order (ids are allocated in creation order), so it shares the fast path.
  if (!filtered && (sort.key === 'id' || sort.key === 'created_at' || sort.key === null)) {
    total = store.size;
    page = [];
    for (let i = offset; i < Math.min(total, offset + paging.perPage); i++) {
      const id = store.idAt(sort.desc ? total - 1 - i : i);
      const c = ctx.state.contact(id);
      if (c) page.push(c);
    }
  } else {
    // Filter on cheap per-contact fields first; build full records only to sort by email and for the page.
    const liveTags = tags.filter((t) => ctx.state.tags.has(t));
    const liveLists = lists.filter((l) => ctx.state.lists.has(l));
    const liveCompanies = companies.filter((x) => ctx.state.companies.has(x));
    const key = JSON.stringify([statuses, liveTags, liveLists, liveCompanies, search, sort.key, sort.desc, ctx.real]);
    const ordered = orderedIds(store, key, () => {
      const ids: number[] = [];
      for (let i = 0; i < store.size; i++) {
        const id = store.idAt(i);
        const c = store.core(id);
        if (!c) continue;
        if (statuses.length > 0 && !statuses.includes(c.status)) continue;
        if (tags.length > 0 && !c.tags.some((t) => liveTags.includes(t))) continue;
        if (lists.length > 0 && !c.lists.some((l) => liveLists.includes(l))) continue;
        if (companies.length > 0 && !c.companyIds.some((x) => liveCompanies.includes(x))) continue;
        if (search && !store.searchText(id)?.includes(search)) continue;
        ids.push(id);
      }
      const needRecords = sort.key !== null && sort.key !== 'id' && sort.key !== 'created_at';
      if (!needRecords) return sort.desc && sort.key !== null ? ids.reverse() : ids;
      const matches = ids.map((id) => ctx.state.contact(id)).filter((c): c is ContactRec => !!c);
      const by = SORTABLE[sort.key!];
      const dir = sort.desc ? -1 : 1;
      // fluentcrm-2.9 orders by the column alone (no tie-breaker): rows sharing a value come in
      // table order, id ascending, whichever the direction (site-ny: 501, 502, 503, 504, 3064).
      const tie = (a: ContactRec, b: ContactRec): number => (ctx.real ? a.id - b.id : (a.id - b.id) * dir);
      matches.sort((a, b) => {
        const x = by(a);
        const y = by(b);
        return x < y ? -dir : x > y ? dir : tie(a, b);
      });
      return matches.map((c) => c.id);
    });
    total = ordered.length;
    const sortKey = sort.key;
    const sortValue = (id: number) => {
      const c = ctx.state.contact(id);
      return c && sortKey ? SORTABLE[sortKey](c) : undefined;
    };
    const window = ctx.tiesByWindow && sortKey !== null && sortKey !== 'id' ? windowWithTies(ordered, offset, paging.perPage, sortValue) : ordered.slice(offset, offset + paging.perPage);
    page = window.map((id) => ctx.state.contact(id)).filter((c): c is ContactRec => !!c);
  }
  const data = page.map((c) => ctx.ser.contact(c, view));
  const body: Record<string, unknown> = { subscribers: paginator(ctx, paging, total, data) };
  if (ctx.real) body.custom = q.get('custom_fields');
  return ok(body);
}

function readView(ctx: RouteCtx): ContactView {
  const withs = queryArray(ctx.query, 'with');
  const view: ContactView = {};
  if (withs.includes('stats')) view.stats = true;
  if (withs.includes('subscriber.custom_values')) view.customKey = 'custom_values';
  if (withs.includes('companies')) view.companies = true;
  return view;
}

function contactId(ctx: RouteCtx): number {
  return Number(ctx.params.id);
}

function getContact(ctx: RouteCtx): SimResponse {
  let id = contactId(ctx);
  if (id === 0) {
    const email = ctx.query.get('get_by_email');
    if (!email) throw notFound('subscriber', { status: 422, body: { message: 'Subscriber not found' } });
    const found = ctx.state.contacts.findIdByEmail(email.slice(0, 254));
    if (found === undefined) throw notFound('subscriber', { status: 422, body: { message: 'Subscriber not found' } });
    id = found;
  }
  const c = ctx.state.requireContact(id);
  const out = ctx.ser.contact(c, { ...readView(ctx), single: true });
  if (queryArray(ctx.query, 'with').includes('commerce_stat')) {
    // Commerce is simulated only through events; the stat block is present and empty.
    out.commerce_stat = { total_order_count: 0, total_order_value: '0.00', first_order_date: null, last_order_date: null, currency: 'USD' };
  }
  // fluentcrm-2.9 adds these two for an unsubscribed contact only (root captures: unsubscribed
  // contact 1 has them; site-ny's subscribed contact 58 never does).
  if (ctx.real && c.status === 'unsubscribed') {
    out.unsubscribe_reason = '';
    out.unsubscribe_date = '';
  }
  const body: Record<string, unknown> = { subscriber: out };
  // with[]=custom_fields adds the field definitions beside the contact (as captured), not values.
  if (queryArray(ctx.query, 'with').includes('custom_fields')) {
    body.custom_fields = ctx.state.customFields.map((f) => ({
      label: f.label,
      slug: f.slug,
      type: f.type,
      field_key: f.fieldKey,
      ...(f.options ? { options: [...f.options] } : {}),
      group: 'default',
    }));
  }
  return ok(body);
}

/** Whether a write sent this field with something in it (fluentcrm-2.9 loads a relation it set). */
const given = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null && v !== '');

function createContact(ctx: RouteCtx): SimResponse {
  const { action, contact } = ctx.state.createContact(ctx.body, { forceUpdate: ctx.query.get('__force_update') ?? undefined });
  // Real: tags and lists only when sent; companies on a force-update of an existing contact (captured).
  const b = ctx.body;
  return ok({
    message: action === 'created' ? 'Successfully added the subscriber.' : 'Subscriber successfully updated',
    contact: ctx.real ? ctx.ser.written(contact, { tags: given(b.tags), lists: given(b.lists), companies: action === 'updated' }) : ctx.ser.contact(contact),
    action_type: action,
  });
}

function updateContact(ctx: RouteCtx): SimResponse {
  const raw = ctx.body.subscriber;
  const body = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : ctx.body;
  const { contact, isDirty } = ctx.state.updateContact(contactId(ctx), body);
  const touched = { tags: given(body.attach_tags) || given(body.detach_tags), lists: given(body.attach_lists) || given(body.detach_lists), companies: false };
  const out: Record<string, unknown> = { message: 'Subscriber successfully updated', contact: ctx.real ? ctx.ser.written(contact, touched) : ctx.ser.contact(contact), isDirty };
  if (ctx.real) out.values = [];
  return ok(out);
}

function deleteContact(ctx: RouteCtx): SimResponse {
  ctx.state.deleteContact(contactId(ctx));
  return ok({ message: 'Selected Subscriber has been deleted successfully' });
}

function listNotes(ctx: RouteCtx): SimResponse {
  const id = contactId(ctx);
  if (!ctx.real) ctx.state.requireContact(id);
  const paging = readPaging(ctx, 10);
  const search = (ctx.query.get('search') ?? '').toLowerCase().slice(0, 200);
  const notes = [...ctx.state.notes.values()].filter((n) => n.subscriberId === id && (!search || n.title.toLowerCase().includes(search))).sort((a, b) => b.id - a.id);
  const offset = (paging.page - 1) * paging.perPage;
  const data = notes.slice(offset, offset + paging.perPage).map((n) => ctx.ser.note(n, true));
  return ok(ctx.real ? { notes: paginator(ctx, paging, notes.length, data), fields: noteFormFields() } : { notes: paginator(ctx, paging, notes.length, data) });
}

function addNote(ctx: RouteCtx): SimResponse {
  const note = ctx.state.addNote(contactId(ctx), ctx.body);
  return ok({ note: ctx.real ? ctx.ser.createdNote(note) : ctx.ser.note(note, false), message: 'Note successfully added' });
}

function updateNote(ctx: RouteCtx): SimResponse {
  const note = ctx.state.updateNote(contactId(ctx), Number(ctx.params.noteId), ctx.body);
  return ok({ note: ctx.ser.note(note, false), message: 'Note successfully updated' });
}

// In fluentcrm-2.9's order per path, which real mode's Allow header keeps (GET, DELETE, PUT for one contact).
export const contactRoutes: RouteDef[] = [
  { method: 'GET', path: '/subscribers', caps: READ, handler: listContacts },
  { method: 'POST', path: '/subscribers', caps: WRITE, handler: createContact },
  { method: 'GET', path: '/subscribers/:id', caps: READ, handler: getContact },
  { method: 'DELETE', path: '/subscribers/:id', caps: DELETE, handler: deleteContact },
  { method: 'PUT', path: '/subscribers/:id', caps: WRITE, handler: updateContact },
  { method: 'GET', path: '/subscribers/:id/notes', caps: READ, handler: listNotes },
  { method: 'POST', path: '/subscribers/:id/notes', caps: WRITE, handler: addNote },
  { method: 'PUT', path: '/subscribers/:id/notes/:noteId', caps: WRITE, handler: updateNote },
];
