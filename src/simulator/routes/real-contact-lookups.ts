import { CONTACT_STATUSES } from '../contact-input.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import type { ContactRec } from '../model.js';
import { queryArray } from '../paging.js';
import { SimError } from '../sim-error.js';

const READ = ['crm_read_contacts', 'crm_manage_contacts'];

/** A row of the contact picker: names, email and the id as a string (capture). */
function pickerRow(c: ContactRec): Record<string, unknown> {
  return { first_name: c.firstName, last_name: c.lastName, full_name: `${c.firstName ?? ''} ${c.lastName ?? ''}`.trim(), email: c.email, id: String(c.id) };
}

/** The query builder's LIMIT from `limit` (default 20): a non-number is 0 rows, a negative one no limit. Not captured. */
function readLimit(raw: string | null): number {
  if (raw === null) return 20;
  const n = Number.parseInt(raw, 10);
  return Number.isNaN(n) ? 0 : n < 0 ? Infinity : n;
}

/**
 * GET /subscribers/search-contacts (capture, README "Types"): the contact picker. Up to `limit`
 * contacts matching `search`, in table (id) order, and the contacts named by `values`, in an
 * object keyed by id. The match is the contact listing's `search`, the one the captures show
 * (names and email); PHP's "0" is no search, as an empty one.
 */
function searchContacts(ctx: RouteCtx): SimResponse {
  const q = ctx.query;
  const search = (q.get('search') ?? '').trim().toLowerCase().slice(0, 200);
  const limit = readLimit(q.get('limit'));
  const store = ctx.state.contacts;
  const contacts: Record<number, Record<string, unknown>> = {};
  let found = 0;
  for (let i = 0; search !== '' && search !== '0' && i < store.size && found < limit; i++) {
    const id = store.idAt(i);
    const c = store.searchText(id)?.includes(search) ? ctx.state.contact(id) : undefined;
    if (!c) continue;
    contacts[id] = pickerRow(c);
    found++;
  }
  for (const v of queryArray(q, 'values')) {
    const id = Number(v);
    const c = Number.isInteger(id) && id > 0 && !contacts[id] ? ctx.state.contact(id) : undefined;
    if (c) contacts[id] = pickerRow(c);
  }
  return ok({ contacts });
}

const REQUIRED = 'filter_type & current_id is required';

/** Whether a contact passes the listing's simple filters (`statuses[]`, `tags[]`, `lists[]`, `search`) as prev-next-ids reads them. */
function contactFilter(ctx: RouteCtx, advanced: boolean): (id: number) => boolean {
  const q = ctx.query;
  const search = (q.get('search') ?? '').trim().toLowerCase().slice(0, 200);
  const live = (name: string, map: Map<number, unknown>): number[] =>
    advanced
      ? []
      : queryArray(q, name)
          .map(Number)
          .filter((n) => map.has(n));
  const asked = (name: string): boolean => !advanced && queryArray(q, name).length > 0;
  const statuses = advanced ? [] : queryArray(q, 'statuses').filter((s) => (CONTACT_STATUSES as readonly string[]).includes(s));
  const tags = live('tags', ctx.state.tags);
  const lists = live('lists', ctx.state.lists);
  const store = ctx.state.contacts;
  return (id) => {
    const c = store.core(id);
    if (!c) return false;
    if (statuses.length > 0 && !statuses.includes(c.status)) return false;
    if (asked('tags') && !c.tags.some((t) => tags.includes(t))) return false;
    if (asked('lists') && !c.lists.some((l) => lists.includes(l))) return false;
    return search === '' || search === '0' || store.searchText(id)?.includes(search) === true;
  };
}

/** Up to 10 matching ids below or above `current`, walked downwards or upwards. */
function tenIds(ctx: RouteCtx, current: number, below: boolean, downwards: boolean, match: (id: number) => boolean): number[] {
  const store = ctx.state.contacts;
  const [lo, hi] = below ? [0, store.lowerBound(current)] : [store.lowerBound(current + 1), store.size];
  const out: number[] = [];
  for (let k = 0; k < hi - lo && out.length < 10; k++) {
    const id = store.idAt(downwards ? hi - 1 - k : lo + k);
    if (match(id)) out.push(id);
  }
  return out;
}

/**
 * GET /subscribers/prev-next-ids: the profile screen's previous and next buttons. The capture is
 * its 422 without `filter_type`. Not captured, from the plugin's controller: with `filter_type`
 * and `current_id`, up to 10 ids of the filtered listing on each side (next in `sort_type` order,
 * DESC by default; prev the other way). The plugin tests `sort_type == 'DESC'` case-sensitively
 * for the side but orders by it case-insensitively, so `desc` takes the 10 highest ids above.
 * `filter_type=advanced` ignores tags, lists and statuses; its filter groups are not modelled.
 */
function prevNextIds(ctx: RouteCtx): SimResponse {
  const q = ctx.query;
  const filterType = q.get('filter_type') ?? '';
  const current = Number.parseInt(q.get('current_id') ?? '', 10) || 0;
  if (filterType === '' || filterType === '0' || current === 0) throw new SimError(422, null, REQUIRED, { status: 422, body: { message: REQUIRED } });
  const sortType = q.get('sort_type') ?? 'DESC';
  const desc = sortType === 'DESC';
  const match = contactFilter(ctx, filterType === 'advanced');
  const next = tenIds(ctx, current, desc, sortType.toUpperCase() === 'DESC', match);
  const prev = tenIds(ctx, current, !desc, !desc, match);
  return ok({ navigation: { next, prev }, has_next: next.length === 10, has_prev: prev.length === 10 });
}

/** Contact lookups of fluentcrm-2.9 that the interface lacks: its admin screens' pickers. */
export const realContactLookupRoutes: RouteDef[] = [
  { method: 'GET', path: '/subscribers/prev-next-ids', caps: READ, handler: prevNextIds },
  { method: 'GET', path: '/subscribers/search-contacts', caps: READ, handler: searchContacts },
];
