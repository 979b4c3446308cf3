import { Catalog, type Taxonomy } from './catalog.js';
import { ContactCounts, type Counts } from './contact-counts.js';
import { ContactStore } from './contact-store.js';
import { isForceUpdate, readContactPatch, type ContactPatch } from './contact-input.js';
import type { EventListener, EventName } from './events.js';
import type { CompanyRec, ContactRec, CustomFieldRec, NoteRec, TaxonomyRec } from './model.js';
import { readNote } from './note-input.js';
import type { ResolvedOptions } from './options.js';
import { contactHash, SEED_CUSTOM_FIELDS, seedCompanyCount } from './seed-data.js';
import { notFound, SimError } from './sim-error.js';
import { formatLocal } from './time.js';
import { contactEventData, sameContact, sameRow } from './contact-diff.js';

export type { Taxonomy } from './catalog.js';

/**
 * The simulated CRM's state and every contact write, shared by the HTTP routes and the
 * in-process `mutate` API so that both behave identically (timestamps, counts, webhook events).
 */
export class SimState {
  readonly contacts: ContactStore;
  readonly catalog: Catalog;
  readonly tags: Map<number, TaxonomyRec>;
  readonly lists: Map<number, TaxonomyRec>;
  readonly companies: Map<number, CompanyRec>;
  readonly customFields: CustomFieldRec[];
  readonly notes = new Map<number, NoteRec>();
  readonly scheduledReports: Record<string, unknown>[] = [];
  /** Until when the simulated index repair holds its lock (epoch ms). */
  repairLockUntil = 0;
  /** Real mode: whether the company module is on (options.companyModule; POST /setting/experiments). */
  companyModule: boolean;
  readonly #listeners: EventListener[] = [];
  readonly #counts: ContactCounts;
  #nextNote = 1;

  constructor(readonly opts: ResolvedOptions) {
    const companyCount = opts.contacts > 0 ? seedCompanyCount(opts.contacts) : 0;
    this.contacts = new ContactStore(opts.seed, opts.contacts, companyCount);
    this.catalog = new Catalog(opts.seed, companyCount, opts.now);
    this.tags = this.catalog.tags;
    this.lists = this.catalog.lists;
    this.companies = this.catalog.companies;
    this.customFields = SEED_CUSTOM_FIELDS.map((f) => ({ ...f, ...(f.options ? { options: [...f.options] } : {}) }));
    this.#counts = new ContactCounts(opts.seed, opts.contacts, companyCount);
    this.companyModule = opts.companyModule;
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
    return this.catalog.taxonomy(kind);
  }

  /** Computes the seeded counts in the background (see ContactCounts). */
  warmCounts(): void {
    this.#counts.warm();
  }

  dispose(): void {
    this.#counts.dispose();
  }

  counts(): Counts {
    return this.#counts.snapshot();
  }

  /** Every contact write goes through here: store, membership times (`at`), then count changes. */
  #write(old: ContactRec | undefined, next: ContactRec | undefined, at: number): void {
    if (next) {
      this.contacts.put(next);
      this.contacts.recordMemberships(old, next, at);
    } else if (old) this.contacts.remove(old.id);
    this.#counts.applyWrite(old, next);
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

  // ---- contacts

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
      tags: this.catalog.resolveRefs('tag', patch.tags),
      lists: this.catalog.resolveRefs('list', patch.lists),
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
    this.#write(undefined, rec, now);
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
    if (patch.tags) next.tags = this.catalog.resolveRefs('tag', patch.tags);
    if (patch.lists) next.lists = this.catalog.resolveRefs('list', patch.lists);
    const addTags = this.catalog.resolveRefs('tag', patch.attachTags).filter((t) => !next.tags.includes(t));
    const removeTags = this.catalog.resolveRefs('tag', patch.detachTags);
    next.tags = [...next.tags, ...addTags].filter((t) => !removeTags.includes(t));
    const addLists = this.catalog.resolveRefs('list', patch.attachLists).filter((l) => !next.lists.includes(l));
    const removeLists = this.catalog.resolveRefs('list', patch.detachLists);
    next.lists = [...next.lists, ...addLists].filter((l) => !removeLists.includes(l));
    if (patch.custom) next.custom = patch.custom;
    if (patch.companyIds) {
      next.companyIds = patch.companyIds.filter((c) => this.companies.has(c));
      next.companyId = next.companyIds[0] ?? null;
    }
    if (sameContact(old, next)) return { contact: old, isDirty: false };
    const now = this.now;
    // fluentcrm-2.9 writes tag and list attach/detach to a pivot table only: the contact's
    // updated_at stays, and PUT answers isDirty false because that flag is about the row's own
    // columns (site-ny README, "updated_at vs membership"). The written interface says nothing,
    // so spec mode keeps bumping updated_at and answering isDirty true on every change.
    const membershipOnly = this.opts.mode === 'real' && sameRow(old, next);
    const isDirty = !membershipOnly;
    next.updatedAt = membershipOnly ? old.updatedAt : Math.max(now, old.updatedAt);
    this.#write(old, next, now);
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
    this.#write(old, undefined, this.now);
    for (const [nid, n] of this.notes) if (n.subscriberId === id) this.notes.delete(nid);
    this.emit('contact.deleted', { contact: contactEventData(old, this) });
    return old;
  }

  #ref(kind: Taxonomy, id: number): { id: number; title: string; slug: string } | { id: number } {
    const t = this.taxonomy(kind).get(id);
    return t ? { id: t.id, title: t.title, slug: t.slug } : { id };
  }

  createTaxonomy(kind: Taxonomy, body: Record<string, unknown>): TaxonomyRec {
    return this.catalog.createTaxonomy(kind, body);
  }

  updateTaxonomy(kind: Taxonomy, id: number, body: Record<string, unknown>): TaxonomyRec {
    return this.catalog.updateTaxonomy(kind, id, body);
  }

  /** Memberships stay in stored contacts and are filtered on read (ids are never reused). */
  deleteTaxonomy(kind: Taxonomy, id: number): TaxonomyRec {
    return this.catalog.deleteTaxonomy(kind, id);
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
    const note = readNote(body, this.opts.timezone, this.opts.mode === 'real');
    const now = this.now;
    const rec: NoteRec = { id: this.#nextNote++, subscriberId, parentId: null, createdBy: 1, status: 'open', isPrivate: 1, ...note, createdAt: note.createdAt ?? now, updatedAt: now };
    this.notes.set(rec.id, rec);
    return rec;
  }

  updateNote(subscriberId: number, noteId: number, body: Record<string, unknown>): NoteRec {
    const old = this.notes.get(noteId);
    if (!old || old.subscriberId !== subscriberId) throw notFound('note');
    const note = readNote(body, this.opts.timezone, this.opts.mode === 'real');
    const next = { ...old, ...note, createdAt: note.createdAt ?? old.createdAt, updatedAt: this.now };
    this.notes.set(noteId, next);
    return next;
  }
}
