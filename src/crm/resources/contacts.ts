import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { nullIfNotFound } from '../not-found.js';
import type { HttpRequest } from '../transport.js';
import { asObject, parsePage, parseRecord, schemaError } from '../parse.js';
import { scanContactPage } from '../scan-contact-page.js';
import type { Contact, ContactWrite, Page, RawPage, UpdatedContact, UpsertResult, WrittenContact } from '../types.js';
import { createNotesApi, type NotesApi } from './notes.js';

export interface ContactListQuery {
  page: number;
  perPage: number;
  order?: 'asc' | 'desc';
  /**
   * `updated_at` is outside the written interface (id, email, created_at): fluentcrm-2.9 honours
   * it, a CRM following the interface may refuse it or ignore it silently, so check the rows.
   */
  orderBy?: 'id' | 'email' | 'created_at' | 'updated_at';
  search?: string;
  statuses?: string[];
  tags?: number[];
  lists?: number[];
  companyIds?: number[];
  /** Include custom field values (`custom_fields=true`). */
  customFields?: boolean;
}

export type ContactUpdate = Partial<ContactWrite> & {
  attach_tags?: number[];
  detach_tags?: number[];
  attach_lists?: number[];
  detach_lists?: number[];
};

export interface ContactsApi {
  listPage(q: ContactListQuery): Promise<Page<Contact>>;
  /**
   * The same page as the CRM sent it: the body unparsed, with the paginator's numbers and each
   * row's id read by a scan of it (`scanContactPage`). For loads that let DuckDB parse the rows.
   * `read.updatedAt`: also each row's `updated_at`, normalized in the client's time zone.
   */
  listPageRaw(q: ContactListQuery, read?: { updatedAt?: boolean }): Promise<RawPage>;
  /** null when the contact does not exist (404, or the real deployment's 422 "Subscriber not found"). */
  get(id: number, opts?: { with?: string[] }): Promise<Contact | null>;
  getByEmail(email: string): Promise<Contact | null>;
  /**
   * Throws DuplicateError when the email exists (409, or 422 on the real deployment). The contact
   * as the answer holds it: fields it lacks are absent (see WrittenContact).
   */
  create(body: ContactWrite): Promise<UpsertResult>;
  /** Create-or-update by email (`__force_update: "yes"`); the contact as the answer holds it. */
  upsert(body: ContactWrite): Promise<UpsertResult>;
  /** The contact as the answer holds it: fields it lacks are absent (`lists` mostly, see UpdatedContact). */
  update(id: number, body: ContactUpdate): Promise<UpdatedContact>;
  delete(id: number): Promise<void>;
  notes: NotesApi;
}

const MAX_SEARCH = 200;

export function createContactsApi(ctx: ClientContext): ContactsApi {
  const { exec, schemas } = ctx;

  function contactFrom(body: unknown, key: string, route: string): Contact {
    const o = asObject(body, route);
    const rec = o[key];
    if (!rec || typeof rec !== 'object') throw schemaError(route, `expected "${key}" to be a contact object`);
    return parseRecord(schemas.Contact, rec, route);
  }

  async function post(body: ContactWrite, force: boolean): Promise<UpsertResult> {
    checkWrite(body);
    const route = 'POST /subscribers';
    const res = await exec(
      { method: 'POST', path: '/subscribers', body: force ? { ...body, __force_update: 'yes' } : body },
      // An upsert by email repeated gives the same result; a plain create would be a duplicate.
      { idempotent: force },
    );
    const o = asObject(res, route);
    const action = o.action_type === 'updated' ? 'updated' : 'created';
    // fluentcrm-2.9 answers with `tags`/`lists` only when the body set them, and no custom values.
    return { contact: onlySent(contactFrom(res, 'contact', route)), actionType: action };
  }

  return {
    async listPage(q) {
      const body = await exec(listRequest(q));
      return parsePage(body, ['subscribers'], schemas.Contact, q, 'GET /subscribers');
    },

    async listPageRaw(q, read = {}) {
      const body = await exec(listRequest(q), { raw: true });
      // An empty 2xx body comes back parsed (null) and is no listing; the scan names the shape.
      return scanContactPage(typeof body === 'string' ? body : JSON.stringify(body), q, 'GET /subscribers', read.updatedAt ? { updatedAt: ctx.ts } : {});
    },

    async get(id, opts = {}) {
      checkId(id, 'contact id');
      return nullIfNotFound(async () => {
        const body = await exec({ method: 'GET', path: `/subscribers/${id}`, query: { with: opts.with } });
        const o = asObject(body, 'GET /subscribers/{id}');
        return o.subscriber ? contactFrom(o, 'subscriber', 'GET /subscribers/{id}') : null;
      });
    },

    async getByEmail(email) {
      if (!email || email.length > 320) throw new CrmArgumentError('getByEmail needs an email address (at most 320 characters)');
      return nullIfNotFound(async () => {
        const body = await exec({ method: 'GET', path: '/subscribers/0', query: { get_by_email: email } });
        const o = asObject(body, 'GET /subscribers/0');
        return o.subscriber ? contactFrom(o, 'subscriber', 'GET /subscribers/0') : null;
      });
    },

    create: (body) => post(body, false),
    upsert: (body) => post(body, true),

    async update(id, body) {
      checkId(id, 'contact id');
      const route = 'PUT /subscribers/{id}';
      // The interface wraps the fields in `subscriber`; the real deployment also reads them unwrapped.
      const res = await exec({ method: 'PUT', path: `/subscribers/${id}`, body: { subscriber: body, ...body } }, { idempotent: true });
      return onlySent(contactFrom(res, 'contact', route));
    },

    async delete(id) {
      checkId(id, 'contact id');
      await exec({ method: 'DELETE', path: `/subscribers/${id}` });
    },

    notes: createNotesApi(ctx),
  };
}

function listRequest(q: ContactListQuery): HttpRequest {
  checkPageQuery(q, 'contacts.listPage');
  if (q.search !== undefined && q.search.length > MAX_SEARCH) throw new CrmArgumentError(`search is longer than ${MAX_SEARCH} characters`);
  const dir = q.order ? q.order.toUpperCase() : undefined;
  return {
    method: 'GET',
    path: '/subscribers',
    // Earlier pages first when scans share the request slots: see RateLimiter.acquire.
    priority: q.page,
    query: {
      page: q.page,
      per_page: q.perPage,
      // The interface documents order_by/order_type; the real deployment reads sort_by/sort_type.
      order_by: q.orderBy ?? (dir ? 'id' : undefined),
      order_type: dir,
      sort_by: q.orderBy ?? (dir ? 'id' : undefined),
      sort_type: dir,
      search: q.search,
      statuses: q.statuses,
      tags: q.tags,
      lists: q.lists,
      company_ids: q.companyIds,
      custom_fields: q.customFields ? 'true' : undefined,
    },
  };
}

/**
 * The contact without the fields whose keys the response lacked, which the tolerant reader fills
 * in (null, [] or {}) for listings, where every row carries them.
 */
function onlySent(c: Contact): WrittenContact {
  const out: WrittenContact = { ...c };
  for (const k of Object.keys(c) as Array<keyof Contact>) {
    if (k === 'id' || k === 'email' || k === 'raw') continue;
    const sent = k === 'custom_values' ? 'custom_values' in c.raw || 'custom_fields' in c.raw : k in c.raw;
    if (!sent) delete out[k];
  }
  return out;
}

function checkWrite(body: ContactWrite): void {
  if (!body || typeof body.email !== 'string' || body.email.length === 0 || body.email.length > 320) {
    throw new CrmArgumentError('A contact write needs an email (at most 320 characters)');
  }
  if (typeof body.status !== 'string' || body.status.length === 0) {
    // The server requires status even with __force_update (422 otherwise).
    throw new CrmArgumentError(`A contact write needs a status (subscribed, unsubscribed, pending, bounced, complained) for ${body.email}`);
  }
}
