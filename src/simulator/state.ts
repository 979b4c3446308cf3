import { ContactStore } from './contact-store.js';
import { isForceUpdate, readContactPatch, type ContactPatch } from './contact-input.js';
import type { EventListener, EventName } from './events.js';
import type { CompanyRec, ContactRec, CustomFieldRec, NoteRec, TaxonomyRec } from './model.js';
import type { ResolvedOptions } from './options.js';
import { contactHash, type ContactCore, SEED_CUSTOM_FIELDS, seededCore, seedCompanyCount, seededCompanies, seededTaxonomy, slugify } from './seed-data.js';
import { invalidParam, notFound, SimError } from './sim-error.js';
import { formatLocal, parseTimestamp } from './time.js';

export type Taxonomy = 'tag' | 'list';

interface Counts {
  total: Map<string, number>;
  subscribed: Map<string, number>;
}

/**
 * The simulated CRM's state and every write, shared by the HTTP routes and the in-process
 * `mutate` API so that both behave identically (timestamps, counters, webhook events).
 */
export class SimState {
  readonly contacts: ContactStore;
  readonly tags = new Map<number, TaxonomyRec>();
  readonly lists = new Map<number, TaxonomyRec>();
  readonly companies = new Map<number, CompanyRec>();
  readonly customFields: CustomFieldRec[];
  readonly notes = new Map<number, NoteRec>();
  readonly scheduledReports: Record<string, unknown>[] = [];
  /** Until when the simulated index repair holds its lock (epoch ms). */
  repairLockUntil = 0;
  readonly #listeners: EventListener[] = [];
  /** Counts of the seeded contacts as generated (a pure function of the seed), filled in chunks. */
  readonly #baseline: Counts = { total: new Map(), subscribed: new Map() };
  #baselineNext = 1;
  #baselineTimer: NodeJS.Immediate | undefined;
  /** Every write since start, as count changes; counts = baseline + delta. */
  readonly #delta: Counts = { total: new Map(), subscribed: new Map() };
  #nextTag: number;
  #nextList: number;
  #nextCompany: number;
  #nextNote = 1;

  constructor(readonly opts: ResolvedOptions) {
    const companyCount = opts.contacts > 0 ? seedCompanyCount(opts.contacts) : 0;
    this.contacts = new ContactStore(opts.seed, opts.contacts, companyCount);
    for (const t of seededTaxonomy('tag')) this.tags.set(t.id, t);
    for (const l of seededTaxonomy('list')) this.lists.set(l.id, l);
    for (const c of seededCompanies(opts.seed, companyCount)) this.companies.set(c.id, c);
    this.customFields = SEED_CUSTOM_FIELDS.map((f) => ({ ...f, ...(f.options ? { options: [...f.options] } : {}) }));
    this.#nextTag = this.tags.size + 1;
    this.#nextList = this.lists.size + 1;
    this.#nextCompany = companyCount + 1;
  }

  get now(): number {
    return this.opts.now();
  }

  /** Site-local zone-less timestamp, the shape of most resources. */
  formatLocal(ms: number): string {
    return formatLocal(ms, this.opts.timezone);
  }

  onEvent(listener: EventListener): void {
    this.#listeners.push(listener);
  }

  emit(event: EventName, data: Record<string, unknown>, at = this.now): void {
    for (const l of this.#listeners) l({ event, data, at });
  }

  taxonomy(kind: Taxonomy): Map<number, TaxonomyRec> {
    return kind === 'tag' ? this.tags : this.lists;
  }

  /** The contact with deleted tags, lists and companies left out (deletes do not rewrite seeded rows). */
  contact(id: number): ContactRec | undefined {
    const c = this.contacts.get(id);
    if (!c) return undefined;
    const tags = c.tags.filter((t) => this.tags.has(t));
    const lists = c.lists.filter((l) => this.lists.has(l));
    const companyIds = c.companyIds.filter((x) => this.companies.has(x));
    if (tags.length === c.tags.length && lists.length === c.lists.length && companyIds.length === c.companyIds.length) return c;
    const companyId = c.companyId !== null && this.companies.has(c.companyId) ? c.companyId : null;
    return { ...c, tags, lists, companyIds, companyId };
  }

  requireContact(id: number): ContactRec {
    const c = this.contact(id);
    if (!c) {
      throw notFound('subscriber', { status: 422, body: { message: 'Subscriber not found' } });
    }
    return c;
  }

  // ---- counts (tag, list, company, status): the seeded baseline plus the changes of every write

  /** Computes the seeded baseline in the background so that the first tag listing at 1M is quick. */
  warmCounts(): void {
    const step = (): void => {
      this.#scanBaseline(this.#baselineNext + 50_000);
      this.#baselineTimer = this.#baselineNext <= this.opts.contacts ? setImmediate(step) : undefined;
    };
    if (this.#baselineNext <= this.opts.contacts) this.#baselineTimer = setImmediate(step);
  }

  dispose(): void {
    if (this.#baselineTimer) clearImmediate(this.#baselineTimer);
    this.#baselineTimer = undefined;
  }

  #scanBaseline(untilId: number): void {
    const end = Math.min(untilId, this.opts.contacts + 1);
    const companies = this.opts.contacts > 0 ? seedCompanyCount(this.opts.contacts) : 0;
    for (let id = this.#baselineNext; id < end; id++) this.#count(this.#baseline, seededCore(this.opts.seed, id, companies), 1);
    this.#baselineNext = Math.max(this.#baselineNext, end);
  }

  counts(): Counts {
    this.#scanBaseline(Number.MAX_SAFE_INTEGER);
    const merged: Counts = { total: new Map(this.#baseline.total), subscribed: new Map(this.#baseline.subscribed) };
    for (const key of ['total', 'subscribed'] as const) {
      for (const [k, v] of this.#delta[key]) merged[key].set(k, (merged[key].get(k) ?? 0) + v);
    }
    return merged;
  }

  #count(counts: Counts, c: ContactCore, delta: number): void {
    const bump = (m: Map<string, number>, k: string): void => {
      m.set(k, (m.get(k) ?? 0) + delta);
    };
    bump(counts.total, `s:${c.status}`);
    if (c.status === 'subscribed') bump(counts.subscribed, `s:${c.status}`);
    for (const t of c.tags) {
      bump(counts.total, `t:${t}`);
      if (c.status === 'subscribed') bump(counts.subscribed, `t:${t}`);
    }
    for (const l of c.lists) {
      bump(counts.total, `l:${l}`);
      if (c.status === 'subscribed') bump(counts.subscribed, `l:${l}`);
    }
    for (const x of c.companyIds) {
      bump(counts.total, `c:${x}`);
      if (c.status === 'subscribed') bump(counts.subscribed, `c:${x}`);
    }
  }

  /** Every contact write goes through here: store, then count changes (old out, new in). */
  #write(old: ContactRec | undefined, next: ContactRec | undefined): void {
    if (next) this.contacts.put(next);
    else if (old) this.contacts.remove(old.id);
    if (old) this.#count(this.#delta, old, -1);
    if (next) this.#count(this.#delta, next, 1);
  }

  // ---- contacts

  #resolveTaxonomy(kind: Taxonomy, refs: unknown[] | undefined): number[] {
    if (!refs) return [];
    const map = this.taxonomy(kind);
    const out: number[] = [];
    for (const ref of refs) {
      let id: number | undefined;
      const n = Number(ref);
      if (Number.isInteger(n) && map.has(n)) id = n;
      else if (typeof ref === 'string') {
        // Real deployments accept slugs and titles as well as ids.
        for (const t of map.values()) if (t.slug === ref || t.title === ref) id = t.id;
      }
      if (id !== undefined && !out.includes(id)) out.push(id);
    }
    return out;
  }

  createContact(body: Record<string, unknown>, query: { forceUpdate?: unknown } = {}): { action: 'created' | 'updated'; contact: ContactRec } {
    const mode = this.opts.mode;
    const missing: Record<string, Record<string, string>> = {};
    if (body.email === undefined || body.email === null || body.email === '') missing.email = { required: 'The email field is required.' };
    if (body.status === undefined || body.status === null || body.status === '') missing.status = { required: 'The status field is required.' };
    if (Object.keys(missing).length > 0) {
      const fields = Object.keys(missing).join(', ');
      throw new SimError(400, 'rest_missing_callback_param', `Missing parameter(s): ${fields}; send them in the body.`, { status: 422, body: missing });
    }
    const force = isForceUpdate(body.__force_update, mode) || isForceUpdate(query.forceUpdate, mode);
    const patch = readContactPatch(body, mode, this.customFields, { keepEmptyStrings: false });
    const email = patch.email as string;
    const existingId = this.contacts.findIdByEmail(email);
    if (existingId !== undefined) {
      if (!force) {
        throw new SimError(409, null, 'A contact with this email already exists; send __force_update to update it instead.', {
          status: 422,
          body: { email: { unique: 'Provided email already assigned to another subscriber.' } },
        });
      }
      return { action: 'updated', contact: this.#upsert(existingId, patch) };
    }
    const now = this.now;
    const id = this.contacts.allocateId();
    const rec: ContactRec = {
      id,
      userId: null,
      hash: contactHash(this.opts.seed ^ 0x7777, id),
      email,
      firstName: null,
      lastName: null,
      status: patch.status ?? 'subscribed',
      contactType: 'lead',
      phone: null,
      addressLine1: null,
      addressLine2: null,
      city: null,
      state: null,
      postalCode: null,
      country: null,
      dateOfBirth: null,
      source: null,
      companyId: null,
      companyIds: [],
      tags: this.#resolveTaxonomy('tag', patch.tags),
      lists: this.#resolveTaxonomy('list', patch.lists),
      custom: patch.custom ?? {},
      createdAt: now,
      updatedAt: now,
      stats: { emails: 0, opens: 0, clicks: 0 },
      ...(patch.fields as Partial<ContactRec>),
    };
    if (patch.companyIds) {
      rec.companyIds = patch.companyIds.filter((c) => this.companies.has(c));
      rec.companyId = rec.companyIds[0] ?? null;
    }
    this.#write(undefined, rec);
    this.emit('contact.created', { contact: contactEventData(rec, this) }, now);
    for (const t of rec.tags) this.emit('contact.tag_added', { contact: contactEventData(rec, this), tag: this.#ref('tag', t) }, now);
    for (const l of rec.lists) this.emit('contact.list_added', { contact: contactEventData(rec, this), list: this.#ref('list', l) }, now);
    return { action: 'created', contact: rec };
  }

  /** Create-or-update merge as observed: empty strings keep old values, tags and lists add, subscribed does not fall back to pending. */
  #upsert(id: number, patch: ContactPatch): ContactRec {
    const old = this.requireContact(id);
    const status = patch.status === 'pending' && old.status === 'subscribed' ? 'subscribed' : patch.status;
    return this.#apply(old, {
      ...patch,
      status,
      email: undefined,
      tags: undefined,
      lists: undefined,
      attachTags: [...(patch.tags ?? []), ...(patch.attachTags ?? [])],
      attachLists: [...(patch.lists ?? []), ...(patch.attachLists ?? [])],
      custom: patch.custom ? { ...old.custom, ...patch.custom } : undefined,
    }).contact;
  }

  updateContact(id: number, body: Record<string, unknown>): { contact: ContactRec; isDirty: boolean } {
    const old = this.contacts.get(id);
    if (!old) {
      throw notFound('subscriber', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Subscriber].' } });
    }
    const patch = readContactPatch(body, this.opts.mode, this.customFields, { keepEmptyStrings: true });
    if (patch.email && patch.email.toLowerCase() !== old.email.toLowerCase()) {
      const other = this.contacts.findIdByEmail(patch.email);
      if (other !== undefined && other !== id) {
        throw new SimError(409, null, 'Another contact already has this email; choose a different email.', {
          status: 422,
          body: { email: { unique: 'Provided email already assigned to another subscriber.' } },
        });
      }
    }
    if (patch.custom) patch.custom = { ...old.custom, ...patch.custom };
    return this.#apply(this.requireContact(id), patch);
  }

  #apply(old: ContactRec, patch: ContactPatch): { contact: ContactRec; isDirty: boolean } {
    const next: ContactRec = { ...old, ...(patch.fields as Partial<ContactRec>) };
    if (patch.email) next.email = patch.email;
    if (patch.status) next.status = patch.status;
    if (patch.tags) next.tags = this.#resolveTaxonomy('tag', patch.tags);
    if (patch.lists) next.lists = this.#resolveTaxonomy('list', patch.lists);
    const addTags = this.#resolveTaxonomy('tag', patch.attachTags).filter((t) => !next.tags.includes(t));
    const removeTags = this.#resolveTaxonomy('tag', patch.detachTags);
    next.tags = [...next.tags, ...addTags].filter((t) => !removeTags.includes(t));
    const addLists = this.#resolveTaxonomy('list', patch.attachLists).filter((l) => !next.lists.includes(l));
    const removeLists = this.#resolveTaxonomy('list', patch.detachLists);
    next.lists = [...next.lists, ...addLists].filter((l) => !removeLists.includes(l));
    if (patch.custom) next.custom = patch.custom;
    if (patch.companyIds) {
      next.companyIds = patch.companyIds.filter((c) => this.companies.has(c));
      next.companyId = next.companyIds[0] ?? null;
    }
    const isDirty = !sameContact(old, next);
    if (!isDirty) return { contact: old, isDirty };
    const now = this.now;
    next.updatedAt = Math.max(now, old.updatedAt);
    this.#write(old, next);
    const ev = contactEventData(next, this);
    this.emit('contact.updated', { contact: ev }, now);
    if (old.status !== next.status) this.emit('contact.status_changed', { contact: ev, old_status: old.status, new_status: next.status }, now);
    for (const t of next.tags) if (!old.tags.includes(t)) this.emit('contact.tag_added', { contact: ev, tag: this.#ref('tag', t) }, now);
    for (const t of old.tags) if (!next.tags.includes(t)) this.emit('contact.tag_removed', { contact: ev, tag: this.#ref('tag', t) }, now);
    for (const l of next.lists) if (!old.lists.includes(l)) this.emit('contact.list_added', { contact: ev, list: this.#ref('list', l) }, now);
    for (const l of old.lists) if (!next.lists.includes(l)) this.emit('contact.list_removed', { contact: ev, list: this.#ref('list', l) }, now);
    return { contact: next, isDirty };
  }

  deleteContact(id: number): ContactRec {
    const old = this.contacts.get(id);
    if (!old) {
      throw notFound('subscriber', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Subscriber].' } });
    }
    this.#write(old, undefined);
    for (const [nid, n] of this.notes) if (n.subscriberId === id) this.notes.delete(nid);
    this.emit('contact.deleted', { contact: contactEventData(old, this) });
    return old;
  }

  #ref(kind: Taxonomy, id: number): { id: number; title: string; slug: string } | { id: number } {
    const t = this.taxonomy(kind).get(id);
    return t ? { id: t.id, title: t.title, slug: t.slug } : { id };
  }

  // ---- tags and lists

  createTaxonomy(kind: Taxonomy, body: Record<string, unknown>): TaxonomyRec {
    const title = typeof body.title === 'string' ? body.title.trim().slice(0, 190) : '';
    if (!title) {
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): title; send a title.', {
        status: 422,
        body: kind === 'list' ? { title: { required: 'The title field is required.' }, slug: { required: 'The slug field is required.' } } : { title: { required: 'The title field is required.' } },
      });
    }
    const slug = typeof body.slug === 'string' && body.slug.trim() ? slugify(body.slug) : slugify(title);
    const map = this.taxonomy(kind);
    for (const t of map.values()) {
      if (t.title.toLowerCase() === title.toLowerCase() || t.slug === slug) {
        throw new SimError(400, 'rest_invalid_param', `A ${kind} titled "${title}" already exists; choose another title.`, {
          status: 422,
          body: { slug: { unique: 'The slug attribute is already taken and must be unique.' } },
        });
      }
    }
    const now = this.now;
    const id = kind === 'tag' ? this.#nextTag++ : this.#nextList++;
    const rec: TaxonomyRec = { id, title, slug, description: typeof body.description === 'string' ? body.description.slice(0, 1000) : '', createdAt: now, updatedAt: now };
    map.set(id, rec);
    return rec;
  }

  updateTaxonomy(kind: Taxonomy, id: number, body: Record<string, unknown>): TaxonomyRec {
    const map = this.taxonomy(kind);
    const old = map.get(id);
    if (!old) throw notFound(kind, { status: 404, body: { message: `No query results for model [FluentCrm\\App\\Models\\${kind === 'tag' ? 'Tag' : 'Lists'}].` } });
    const next = { ...old };
    if (typeof body.title === 'string' && body.title.trim()) next.title = body.title.trim().slice(0, 190);
    if (typeof body.slug === 'string' && body.slug.trim()) next.slug = slugify(body.slug);
    if (typeof body.description === 'string') next.description = body.description.slice(0, 1000);
    for (const t of map.values()) {
      if (t.id === id) continue;
      if (t.title.toLowerCase() === next.title.toLowerCase() || t.slug === next.slug) {
        throw new SimError(400, 'rest_invalid_param', `Another ${kind} already uses this title or slug; choose another.`, {
          status: 422,
          body: { message: `Provided slug already exist in another ${kind}` },
        });
      }
    }
    next.updatedAt = this.now;
    map.set(id, next);
    return next;
  }

  deleteTaxonomy(kind: Taxonomy, id: number): TaxonomyRec {
    const map = this.taxonomy(kind);
    const old = map.get(id);
    if (!old) throw notFound(kind);
    map.delete(id);
    // Memberships stay in stored records and are filtered on read (ids are never reused).
    return old;
  }

  // ---- companies

  createCompany(body: Record<string, unknown>): CompanyRec {
    const name = typeof body.name === 'string' ? body.name.trim().slice(0, 190) : '';
    if (!name) throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): name; send a company name.', { status: 422, body: { name: { required: 'The name field is required.' } } });
    for (const c of this.companies.values()) {
      if (c.name.toLowerCase() === name.toLowerCase()) {
        throw new SimError(400, 'rest_invalid_param', `A company named "${name}" already exists; choose another name.`, { status: 422, body: { name: { unique: 'The name attribute is already taken and must be unique.' } } });
      }
    }
    const now = this.now;
    const id = this.#nextCompany++;
    const rec: CompanyRec = {
      id, hash: contactHash(this.opts.seed ^ 0x9999, id), name, industry: null, website: null, email: null, phone: null, description: null, logo: null,
      linkedinUrl: null, addressLine1: null, addressLine2: null, city: null, state: null, country: null, postalCode: null, employeesNumber: 0,
      type: 'Prospect', ownerId: null, status: 'active', createdAt: now, updatedAt: now,
    };
    this.companies.set(id, applyCompanyFields(rec, body));
    return this.companies.get(id) as CompanyRec;
  }

  updateCompany(id: number, body: Record<string, unknown>): CompanyRec {
    const old = this.companies.get(id);
    if (!old) throw notFound('company', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Company].' } });
    const next = applyCompanyFields({ ...old }, body);
    next.updatedAt = this.now;
    this.companies.set(id, next);
    return next;
  }

  deleteCompany(id: number): void {
    if (!this.companies.delete(id)) throw notFound('company', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Company].' } });
  }

  attachCompanies(subscriberIds: number[], companyIds: number[]): number {
    let changed = 0;
    const valid = companyIds.filter((c) => this.companies.has(c));
    for (const sid of subscriberIds) {
      const c = this.contact(sid);
      if (!c) continue;
      const ids = [...new Set([...c.companyIds, ...valid])];
      if (ids.length === c.companyIds.length) continue;
      this.#apply(c, { fields: { companyId: c.companyId ?? ids[0] ?? null }, companyIds: ids });
      changed++;
    }
    return changed;
  }

  // ---- notes

  addNote(subscriberId: number, body: Record<string, unknown>): NoteRec {
    this.requireContact(subscriberId);
    const note = readNote(body, this.opts.timezone);
    const now = this.now;
    const rec: NoteRec = { id: this.#nextNote++, subscriberId, parentId: null, createdBy: 1, status: 'open', isPrivate: 1, ...note, createdAt: note.createdAt ?? now, updatedAt: now };
    this.notes.set(rec.id, rec);
    return rec;
  }

  updateNote(subscriberId: number, noteId: number, body: Record<string, unknown>): NoteRec {
    const old = this.notes.get(noteId);
    if (!old || old.subscriberId !== subscriberId) throw notFound('note');
    const note = readNote(body, this.opts.timezone);
    const next = { ...old, ...note, createdAt: note.createdAt ?? old.createdAt, updatedAt: this.now };
    this.notes.set(noteId, next);
    return next;
  }
}

export const NOTE_TYPES = ['note', 'call', 'email', 'meeting', 'quote_sent', 'quote_accepted', 'quote_refused', 'invoice_sent', 'invoice_part_paid', 'invoice_paid', 'invoice_refunded', 'transaction', 'feedback', 'tweet', 'facebook_post'];

function readNote(body: Record<string, unknown>, timeZone: string): { title: string; description: string; type: string; createdAt: number | undefined } {
  const n = (typeof body.note === 'object' && body.note !== null ? body.note : body) as Record<string, unknown>;
  const missing = ['title', 'description', 'type'].filter((k) => typeof n[k] !== 'string' || !(n[k] as string).trim());
  if (missing.length > 0) {
    throw new SimError(400, 'rest_missing_callback_param', `Missing parameter(s): ${missing.join(', ')}; a note needs title, description, type and created_at.`, {
      status: 422,
      body: Object.fromEntries(missing.map((k) => [k, { required: `The ${k} field is required.` }])),
    });
  }
  if (!NOTE_TYPES.includes(n.type as string)) throw invalidParam('type', `type must be one of ${NOTE_TYPES.join(', ')}.`, 'in');
  // Note timestamps are site-local like every zone-less timestamp of the service.
  const createdAt = typeof n.created_at === 'string' ? parseTimestamp(n.created_at.slice(0, 40), timeZone) : undefined;
  return {
    title: (n.title as string).slice(0, 500),
    description: (n.description as string).slice(0, 20_000),
    type: n.type as string,
    createdAt: createdAt !== undefined && Number.isFinite(createdAt) ? createdAt : undefined,
  };
}

const COMPANY_FIELDS: Record<string, keyof CompanyRec> = {
  name: 'name', industry: 'industry', website: 'website', email: 'email', phone: 'phone', description: 'description', logo: 'logo',
  linkedin_url: 'linkedinUrl', address_line_1: 'addressLine1', address_line_2: 'addressLine2', city: 'city', state: 'state',
  country: 'country', postal_code: 'postalCode', type: 'type', status: 'status',
};

function applyCompanyFields(rec: CompanyRec, body: Record<string, unknown>): CompanyRec {
  const out = rec as unknown as Record<string, unknown>;
  for (const [k, prop] of Object.entries(COMPANY_FIELDS)) {
    const v = body[k];
    if (typeof v === 'string' && (k !== 'name' || v.trim())) out[prop] = v.slice(0, 500);
  }
  if (body.employees_number !== undefined && Number.isFinite(Number(body.employees_number))) rec.employeesNumber = Math.trunc(Number(body.employees_number));
  if (body.owner_id !== undefined) rec.ownerId = Number.isInteger(Number(body.owner_id)) && Number(body.owner_id) > 0 ? Number(body.owner_id) : null;
  return rec;
}

function sameContact(a: ContactRec, b: ContactRec): boolean {
  for (const k of Object.keys(a) as (keyof ContactRec)[]) {
    if (k === 'updatedAt' || k === 'stats') continue;
    const x = a[k];
    const y = b[k];
    if (typeof x === 'object' && x !== null) {
      if (JSON.stringify(x) !== JSON.stringify(y)) return false;
    } else if (x !== y) return false;
  }
  return true;
}

/** `data.contact` of contact events: id, email, first_name, last_name, status, created_at (spec). */
export function contactEventData(c: ContactRec, state: SimState): Record<string, unknown> {
  return {
    id: c.id,
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    status: c.status,
    created_at: state.formatLocal(c.createdAt),
  };
}
