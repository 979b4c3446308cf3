/**
 * The CRM client's public, normalized types: the contract between src/crm (which produces them)
 * and its consumers (activities, warehouse, webhooks, push). Normalization happens in the client:
 * ids and counts are numbers, timestamps are ISO 8601 UTC strings (zone-less CRM timestamps are
 * read in CRM_TIMEZONE), `[]`-for-object is an empty object, and `raw` keeps the record exactly as
 * the CRM sent it so that a schema change loses nothing.
 */

export type JsonObject = Record<string, unknown>;

/** One page of an offset-paginated listing, whatever envelope the endpoint used. */
export interface Page<T> {
  items: T[];
  /** Total rows the server reports, or undefined when the envelope has no total. */
  total: number | undefined;
  perPage: number;
  currentPage: number;
  /** Last page number, or undefined when unknown (then pages are read until one comes back short). */
  lastPage: number | undefined;
  /** Offset-pagination drift noticed while reading this page (set by `paginate`); absent when none. */
  drift?: DriftEvent[];
}

/** A listing row as a scan of the body saw it: its id when that is an integer or numeric string. */
export interface RowRef {
  id: number | undefined;
  /** Normalized as the parsed path does; present only when the scan was asked for it (`ScanFields`). */
  updated_at?: string | null;
}

/**
 * A listing page fetched raw (`listPageRaw`): the rows only as ids, and the body as the CRM sent
 * it, for the warehouse to parse. `alsoRead` holds bodies of pages re-read for rows that slid
 * back (`verifyBoundaries`): those rows are among `items`, and their records in those bodies.
 */
export interface RawPage extends Page<RowRef> {
  body: string;
  /**
   * Where each listed row's JSON text starts and ends in `body` (string indices, start and end
   * in turn), when the body is in the common envelope; the load then takes the rows by these.
   */
  rowSpans?: readonly number[];
  alsoRead?: string[];
}

/**
 * Offset pagination drifts when rows are inserted or deleted during a scan: rows shift across page
 * boundaries, so some are seen twice and others not at all. The paginator reports what it notices.
 */
export interface DriftEvent {
  /**
   * total_changed: the reported total differs from the previous page's. overlap: ids of the previous
   * page appear again (rows inserted ahead). gap: the total shrank between two pages of an id-ordered
   * scan, so rows strictly between `afterId` and `beforeId` (in scan order) may have slid onto the page
   * already read and been skipped (re-read that range). order_violation: ids out of the requested order at a
   * boundary. count_mismatch: at the end, distinct rows read differ from the final total.
   * recovered: with `verifyBoundaries`, rows that slid back were re-read and added to this page.
   */
  kind: 'total_changed' | 'overlap' | 'gap' | 'order_violation' | 'count_mismatch' | 'recovered';
  /** The page on which it was noticed. */
  page: number;
  /** Human-readable account, e.g. "total went from 500 to 497 between page 3 and page 4". */
  detail: string;
  previousTotal?: number;
  total?: number;
  /** Ids involved (duplicates at a boundary, the out-of-order pair, or the gap's bounds). */
  ids?: Array<number | string>;
  /** gap: rows after this id (in scan order)... */
  afterId?: number | string;
  /** ...and before this one may have been skipped; undefined when the gap runs to the end of the listing. */
  beforeId?: number | string;
}

export const CONTACT_STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export interface TaxonomyRef {
  id: number;
  title: string;
  slug: string;
}

export interface Contact {
  id: number;
  user_id: number | null;
  hash: string | null;
  email: string;
  first_name: string | null;
  last_name: string | null;
  full_name: string | null;
  /** Kept as sent: real deployments may hold values outside CONTACT_STATUSES. */
  status: string;
  contact_type: string | null;
  phone: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
  country: string | null;
  /** YYYY-MM-DD or null. */
  date_of_birth: string | null;
  photo: string | null;
  company_id: number | null;
  total_points: number | null;
  life_time_value: number | null;
  tags: TaxonomyRef[];
  lists: TaxonomyRef[];
  custom_values: JsonObject;
  /** ISO 8601 UTC, e.g. 2026-11-21T04:55:36.000Z */
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface Tag {
  id: number;
  title: string;
  slug: string;
  description: string | null;
  /** Present when counts were included. */
  total_count: number | null;
  subscribers_count: number | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface List extends Tag {
  is_public: boolean | null;
}

export interface Company {
  id: number;
  name: string;
  industry: string | null;
  website: string | null;
  email: string | null;
  phone: string | null;
  type: string | null;
  owner_id: number | null;
  employees_number: number | null;
  status: string | null;
  city: string | null;
  country: string | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export interface CustomField {
  slug: string;
  label: string;
  type: string;
  field_key: string | null;
  options: string[];
  raw: JsonObject;
}

/** Body of POST /subscribers (create, or upsert with forceUpdate). */
export interface ContactWrite {
  email: string;
  status: string;
  first_name?: string;
  last_name?: string;
  phone?: string;
  address_line_1?: string;
  address_line_2?: string;
  city?: string;
  state?: string;
  postal_code?: string;
  country?: string;
  date_of_birth?: string;
  tags?: number[];
  lists?: number[];
  custom_values?: Record<string, string | string[]>;
}

/**
 * A contact as a write (create, upsert, update) answers it, with nothing the answer did not hold:
 * `id`, `email` and `raw` always, every other field only when the response carried its key.
 * fluentcrm-2.9 sends `tags` only when the write set tags (a create's or upsert's `tags`, an
 * update's `attach_tags`/`detach_tags`), `lists` likewise, and never `custom_values` (every
 * POST_subscribers_* and PUT_subscribers_* capture); the interface promises "id, first_name, email
 * and more" for an update and "contact object" for a create. A missing `lists` is "not said", not
 * "in no list": read the contact for that.
 */
export type WrittenContact = Pick<Contact, 'id' | 'email' | 'raw'> & Partial<Omit<Contact, 'id' | 'email' | 'raw'>>;

/** What `contacts.update` returns: a WrittenContact (the name it had before creates shared it). */
export type UpdatedContact = WrittenContact;

export interface UpsertResult {
  /** As the POST answer holds it: an upsert that sent no tags says nothing about the contact's tags. */
  contact: WrittenContact;
  actionType: 'created' | 'updated';
}

/** A report response kept whole: reports are stored as snapshots. */
export interface ReportSnapshot {
  report: string;
  params: JsonObject;
  data: JsonObject;
}

export interface Note {
  id: number;
  subscriber_id: number | null;
  parent_id: number | null;
  created_by: number | null;
  status: string | null;
  type: string | null;
  is_private: boolean | null;
  title: string | null;
  /** HTML text. */
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
  raw: JsonObject;
}

export const NOTE_TYPES = [
  'note',
  'call',
  'email',
  'meeting',
  'quote_sent',
  'quote_accepted',
  'quote_refused',
  'invoice_sent',
  'invoice_part_paid',
  'invoice_paid',
  'invoice_refunded',
  'transaction',
  'feedback',
  'tweet',
  'facebook_post',
] as const;

export interface NoteWrite {
  title: string;
  description: string;
  type: string;
  /** Zone-less `YYYY-MM-DD HH:MM:SS` in site time, as the CRM expects; defaults to now (UTC) when omitted. */
  created_at?: string;
}

export interface TaxonomyWrite {
  title: string;
  slug?: string;
  description?: string;
}

export interface CompanyWrite {
  name: string;
  email?: string;
  phone?: string;
  type?: string;
  owner_id?: number;
  industry?: string;
  website?: string;
  description?: string;
  logo?: string;
  linkedin_url?: string;
  address_line_1?: string;
  address_line_2?: string;
  city?: string;
  state?: string;
  country?: string;
  postal_code?: string;
  employees_number?: number;
}

export type * from './marketing-types.js';
