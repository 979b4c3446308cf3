/**
 * A small CRM that answers the contact writes and the lookups a push needs the way a REAL
 * deployment does (FluentCRM 2.9.84), written from the captures in
 * ../shared/fixtures/fluentcrm-2.9/ (POST_subscribers_*, PUT_subscribers_*, PATCH_*, GET_tags*,
 * GET_lists*, GET_custom-fields_contacts, GET_subscribers_*) and that folder's README
 * ("Observed behaviour"), not from the written interface and not from crmsync's simulator.
 *
 * What follows the captures (the written interface says otherwise in several places):
 * - create answers 200 (never 201) `{message, contact, action_type: "created"|"updated", __bench}`;
 *   the contact carries `tags`/`lists` only when the body named them, never `custom_values`;
 * - validation errors are 422 with a bare map `{field: {rule: message}}` (no `code`, no `message`):
 *   invalid email, missing email, missing status (even with `__force_update`), duplicate email
 *   (case-insensitive) as `{"email":{"unique":...}}`, never 409;
 * - `__force_update` works as `"yes"`, JSON `true` or the query `?__force_update=yes`; `"true"` and
 *   `1` do not (PHP's loose `== 'yes'`), so the duplicate 422 comes back;
 * - an unknown status value is stored as `subscribed` (200);
 * - the upsert merges: empty strings do not blank a field, tags and lists are added (never
 *   replaced), subscribed sent `pending` stays subscribed, bounced sent `subscribed` is applied;
 * - custom values whose slug is not a defined field are dropped silently; values are kept as strings;
 * - tags and lists in a create may be ids, slugs or titles;
 * - `GET /tags` is a paginator (default 15 a page, `sort_by` + `sort_order`), `all_tags=true` adds
 *   `all_tags` with string ids; `GET /lists` is a plain array plus `pagination.total`;
 * - `GET /subscribers/{id}` of an unknown id → 422 `{"message":"Subscriber not found"}`, PUT → 404
 *   findOrFail message; `PATCH` and `POST /subscribers/{id}` without an override → 404 `rest_no_route`;
 *   `X-HTTP-Method-Override` and `?_method=PUT` work;
 * - no auth or a wrong password → 401 `rest_forbidden`; a non-admin (editor) → 403 `rest_forbidden`
 *   on every route; unknown routes → 404 `rest_no_route`;
 * - any database exception → 423 `{"message": "<MariaDB text> (SQL: ...)"}`; a PHP fatal → 500, the
 *   WordPress `internal_server_error` JSON, or the HTML "critical error" page when the request lacks
 *   `Accept: application/json`;
 * - no rate limiting (none was seen on the real site).
 *
 * Where the captures are silent, the choice is named in a comment (`not captured:`).
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback } from './loopback.js';

export const REAL_STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'] as const;
/** The contact columns a create or update may set (the captured contact's own columns). */
export const REAL_TEXT_FIELDS = ['prefix', 'first_name', 'last_name', 'phone', 'address_line_1', 'address_line_2', 'city', 'state', 'postal_code', 'country', 'timezone'] as const;

export interface RealTaxon {
  id: number;
  title: string;
  slug: string;
  description?: string;
}

/** As `GET /custom-fields/contacts` shows them (GET_custom-fields_contacts.json). */
export interface RealFieldDef {
  label: string;
  slug: string;
  type: string;
  field_key: string;
  options?: string[];
  group?: string;
}

export interface RealContact {
  id: number;
  email: string;
  status: string;
  first_name: string | null;
  last_name: string | null;
  prefix: string | null;
  phone: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
  country: string | null;
  timezone: string | null;
  date_of_birth: string | null;
  company_id: string | null;
  tags: number[];
  lists: number[];
  custom_values: Record<string, string | string[]>;
  created_at: string;
  updated_at: string;
}

export interface RealRequest {
  seq: number;
  method: string;
  /** Path below `/wp-json/fluent-crm/v2`, or `!<path>` for anything else. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  raw: string;
  /** The parsed body (JSON or form), or undefined. */
  body: unknown;
  arrivedAt: number;
  status?: number;
  /** What the server did: 'created', 'updated', 'deadlock', 'lock_wait', 'sql_error', 'fatal', 'invalid', 'forbidden', ... */
  reason?: string;
}

export interface RealPushServerOptions {
  admin: { username: string; password: string };
  /** A user with a valid application password but the editor role: 403 on every route. */
  editor?: { username: string; password: string };
  tags: RealTaxon[];
  lists: RealTaxon[];
  fields: RealFieldDef[];
  /** Contacts the site holds before the test. */
  contacts?: Array<Partial<RealContact> & { email: string; status: string }>;
  /**
   * Emails (lower case) whose POST /subscribers is answered 423 with MariaDB's deadlock (or lock wait)
   * message before anything is written, this many times; then answered normally.
   */
  deadlock?: Record<string, { times: number; kind: 'deadlock' | 'lock_wait' }>;
  /** Emails (lower case) whose POST /subscribers is answered 423 with this SQL error while listed (a final database error). */
  sqlError?: Map<string, string>;
  /**
   * Emails (lower case) whose POST /subscribers this site's validation refuses: 422 with the captured
   * bare map `{field: {rule: message}}` (a site whose rules differ from the client's checks).
   */
  refuse?: Record<string, Record<string, Record<string, string>>>;
  /** Emails (lower case) whose POST /subscribers meets a PHP fatal (500) this many times. */
  fatal?: Record<string, number>;
  /** Milliseconds each request takes (PHP is not instant). */
  latencyMs?: number;
}

export interface RealPushServer {
  baseUrl: string;
  requests: RealRequest[];
  /** Keyed by lower-cased email. */
  contacts: Map<string, RealContact>;
  /** The site's tags and lists as they are now (creates included). */
  tags: RealTaxon[];
  lists: RealTaxon[];
  options: RealPushServerOptions;
  close(): Promise<void>;
}

const PREFIX = '/wp-json/fluent-crm/v2';
const PHOTO = 'http://127.0.0.1:8080/wp-content/plugins/fluent-crm/assets/images/avatar.png';
const SEED_STAMP = '2026-11-21 04:55:36';

function stamp(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

/** PHP's FILTER_VALIDATE_EMAIL, roughly: ASCII only, a dotted host name (the `email` rule of the captures). */
export function realEmailValid(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0) return false;
  const local = email.slice(0, at);
  const host = email.slice(at + 1);
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..') || local.length > 64) return false;
  const label = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  return new RegExp(`^${label}(?:\\.${label})+$`).test(host);
}

/** PHP's loose `$value == 'yes'`: true for 'yes' and boolean true, false for 'true', 1, '1'. */
function looseYes(v: unknown): boolean {
  return v === 'yes' || v === true;
}

function phpFatalHtml(): string {
  return (
    '<!DOCTYPE html>\n<html lang="en-US">\n<head>\n\t<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />\n' +
    "\t<meta name='robots' content='noindex, nofollow' />\n\t<title>WordPress &rsaquo; Error</title>\n</head>\n<body id=\"error-page\">\n" +
    '\t<div class="wp-die-message"><p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/support/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p></div></body>\n</html>\n'
  );
}

export async function startRealPushServer(opts: RealPushServerOptions): Promise<RealPushServer> {
  const requests: RealRequest[] = [];
  const contacts = new Map<string, RealContact>();
  const tags = opts.tags.map((t) => ({ ...t }));
  const lists = opts.lists.map((t) => ({ ...t }));
  const deadlockLeft = new Map(Object.entries(opts.deadlock ?? {}).map(([k, v]) => [k, { ...v }]));
  const fatalLeft = new Map(Object.entries(opts.fatal ?? {}));
  let nextId = 1;
  const auth = (u: { username: string; password: string }): string => 'Basic ' + Buffer.from(`${u.username}:${u.password}`).toString('base64');
  const adminAuth = auth(opts.admin);
  const editorAuth = opts.editor ? auth(opts.editor) : undefined;

  const blank = (id: number, email: string, status: string): RealContact => ({
    id,
    email,
    status,
    first_name: null,
    last_name: null,
    prefix: null,
    phone: null,
    address_line_1: null,
    address_line_2: null,
    city: null,
    state: null,
    postal_code: null,
    country: null,
    timezone: null,
    date_of_birth: null,
    company_id: null,
    tags: [],
    lists: [],
    custom_values: {},
    created_at: SEED_STAMP,
    updated_at: SEED_STAMP,
  });
  for (const seed of opts.contacts ?? []) {
    const id = seed.id ?? nextId;
    nextId = Math.max(nextId, id + 1);
    contacts.set(seed.email.toLowerCase(), { ...blank(id, seed.email, seed.status), ...seed, id });
  }

  const taxonView = (t: RealTaxon, kind: 'tag' | 'list', subscriberId?: number, pivotAt?: string): Record<string, unknown> => ({
    id: t.id,
    title: t.title,
    slug: t.slug,
    description: t.description ?? '',
    ...(kind === 'list' ? { is_public: '0' } : {}),
    created_at: SEED_STAMP,
    updated_at: SEED_STAMP,
    ...(subscriberId === undefined
      ? {}
      : {
          pivot: {
            subscriber_id: String(subscriberId),
            object_id: String(t.id),
            object_type: kind === 'tag' ? 'FluentCrm\\App\\Models\\Tag' : 'FluentCrm\\App\\Models\\Lists',
            created_at: pivotAt ?? SEED_STAMP,
            updated_at: pivotAt ?? SEED_STAMP,
          },
        }),
  });

  /** The captured contact object, key order and types included (ids int, counters strings, nulls). */
  const contactView = (c: RealContact, extra: { tags?: boolean; lists?: boolean; customValues?: boolean; customFieldsKey?: boolean } = {}): Record<string, unknown> => {
    const out: Record<string, unknown> = {
      id: c.id,
      user_id: null,
      hash: 'REDACTED',
      contact_owner: null,
      company_id: c.company_id,
      prefix: c.prefix,
      first_name: c.first_name,
      last_name: c.last_name,
      email: c.email,
      timezone: c.timezone,
      address_line_1: c.address_line_1,
      address_line_2: c.address_line_2,
      postal_code: c.postal_code,
      city: c.city,
      state: c.state,
      country: c.country,
      ip: null,
      latitude: null,
      longitude: null,
      total_points: '0',
      life_time_value: '0',
      phone: c.phone,
      status: c.status,
      contact_type: 'lead',
      source: null,
      avatar: null,
      date_of_birth: c.date_of_birth,
      created_at: c.created_at,
      last_activity: null,
      updated_at: c.updated_at,
    };
    // A contact without values gets [] (README, Custom fields).
    const cv = Object.keys(c.custom_values).length ? { ...c.custom_values } : [];
    if (extra.customFieldsKey) out.custom_fields = cv;
    if (extra.customValues) out.custom_values = cv;
    out.full_name = [c.first_name, c.last_name].filter((x) => x).join(' ');
    out.photo = PHOTO;
    if (extra.lists)
      out.lists = c.lists
        .map((id) => lists.find((l) => l.id === id))
        .filter((l) => l !== undefined)
        .map((l) => taxonView(l, 'list', c.id));
    if (extra.tags)
      out.tags = c.tags
        .map((id) => tags.find((t) => t.id === id))
        .filter((t) => t !== undefined)
        .map((t) => taxonView(t, 'tag', c.id));
    return out;
  };

  const send = (rec: RealRequest, res: ServerResponse, status: number, body: unknown, contentType = 'application/json; charset=UTF-8'): void => {
    rec.status = status;
    const text = typeof body === 'string' && contentType.startsWith('text/html') ? body : JSON.stringify(body);
    const headers: Record<string, string | number> = {
      'X-Powered-By': 'PHP/8.2.35',
      'Content-Type': contentType,
      'Content-Length': Buffer.byteLength(text),
      'X-Robots-Tag': 'noindex',
      'X-Content-Type-Options': 'nosniff',
      'Access-Control-Expose-Headers': 'X-WP-Total, X-WP-TotalPages, Link',
      'Access-Control-Allow-Headers': 'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type',
    };
    if (status !== 401) {
      headers.Expires = 'Wed, 11 Jan 1984 05:00:00 GMT';
      headers['Cache-Control'] = 'no-cache, must-revalidate, max-age=0';
    }
    const write = (): void => {
      res.writeHead(status, headers);
      res.end(text);
    };
    if (opts.latencyMs) setTimeout(write, opts.latencyMs);
    else write();
  };
  const wpError = (rec: RealRequest, res: ServerResponse, status: number, code: string, message: string): void => send(rec, res, status, { code, message, data: { status } });
  const noRoute = (rec: RealRequest, res: ServerResponse): void => wpError(rec, res, 404, 'rest_no_route', 'No route was found matching the URL and request method.');
  const fatal = (rec: RealRequest, res: ServerResponse): void => {
    rec.reason = 'fatal';
    const acceptsJson = /application\/json/i.test(String(rec.headers.accept ?? ''));
    if (!acceptsJson) return send(rec, res, 500, phpFatalHtml(), 'text/html; charset=UTF-8');
    return send(rec, res, 500, {
      code: 'internal_server_error',
      message: '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/support/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
      data: { status: 500 },
      additional_errors: [],
    });
  };

  /** Resolves ids, slugs or titles (README, Create contact); not captured: unknown ones are left out silently. */
  const resolve = (values: unknown, from: RealTaxon[]): number[] => {
    const arr = Array.isArray(values) ? values : typeof values === 'string' || typeof values === 'number' ? [values] : [];
    const ids: number[] = [];
    for (const v of arr) {
      const s = String(v).trim();
      const hit = /^\d+$/.test(s) ? from.find((t) => t.id === Number(s)) : from.find((t) => t.slug.toLowerCase() === s.toLowerCase() || t.title.toLowerCase() === s.toLowerCase());
      if (hit && !ids.includes(hit.id)) ids.push(hit.id);
    }
    return ids;
  };

  const paginate = (rec: RealRequest, res: ServerResponse, key: string, rows: unknown[], extra: Record<string, unknown> = {}): void => {
    const pp = rec.query.get('per_page');
    let perPage = 15;
    if (pp !== null) {
      if (!/^-?\d+$/.test(pp) || Number(pp) === 0) return fatal(rec, res); // README: per_page=0 or abc → 500 (DivisionByZeroError)
      perPage = Number(pp);
      if (perPage < 0) {
        rec.reason = 'sql_error';
        return send(rec, res, 423, {
          message: `You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '' at line 1 (SQL: select * from \`wp_fc_${key}\` order by \`id\` desc offset 0)`,
        });
      }
    }
    const pageRaw = Number(rec.query.get('page') ?? '1');
    const page = Number.isInteger(pageRaw) && pageRaw >= 1 ? pageRaw : 1;
    const total = rows.length;
    const lastPage = Math.ceil(total / perPage);
    const data = rows.slice((page - 1) * perPage, page * perPage);
    send(rec, res, 200, {
      [key]: {
        total,
        per_page: perPage,
        current_page: page,
        last_page: lastPage,
        next_page_url: page < lastPage ? `${PREFIX}/${key}?page=${page + 1}` : null,
        prev_page_url: page > 1 ? `${PREFIX}/${key}?page=${page - 1}` : null,
        from: data.length ? (page - 1) * perPage + 1 : null,
        to: data.length ? (page - 1) * perPage + data.length : null,
        data,
      },
      ...extra,
      __bench: 0.02,
    });
  };

  const sortTaxa = (rec: RealRequest, rows: RealTaxon[]): RealTaxon[] => {
    const by = rec.query.get('sort_by') ?? 'id';
    const asc = (rec.query.get('sort_order') ?? 'DESC').toUpperCase() === 'ASC';
    const out = [...rows];
    if (by === 'title') out.sort((a, b) => a.title.localeCompare(b.title));
    else out.sort((a, b) => a.id - b.id);
    if (!asc) out.reverse();
    return out;
  };

  /** POST /subscribers: create, or create-or-update by email with a force update (the captures' rules). */
  const createOrUpdate = (rec: RealRequest, res: ServerResponse, b: Record<string, unknown>): void => {
    const email = typeof b.email === 'string' ? b.email.trim() : '';
    const key = email.toLowerCase();
    const injectedDeadlock = deadlockLeft.get(key);
    if (injectedDeadlock && injectedDeadlock.times > 0) {
      // A database exception before anything is written: nothing changes.
      injectedDeadlock.times -= 1;
      rec.reason = injectedDeadlock.kind;
      const message =
        injectedDeadlock.kind === 'deadlock'
          ? 'SQLSTATE[40001]: Serialization failure: 1213 Deadlock found when trying to get lock; try restarting transaction (SQL: insert into `wp_fc_subscribers` (`email`, `status`) values (...))'
          : 'SQLSTATE[HY000]: General error: 1205 Lock wait timeout exceeded; try restarting transaction (SQL: update `wp_fc_subscribers` set `updated_at` = ... where `id` = ...)';
      return send(rec, res, 423, { message });
    }
    const sqlError = opts.sqlError?.get(key);
    if (sqlError !== undefined) {
      rec.reason = 'sql_error';
      return send(rec, res, 423, { message: sqlError });
    }
    const fatalTimes = fatalLeft.get(key) ?? 0;
    if (fatalTimes > 0) {
      fatalLeft.set(key, fatalTimes - 1);
      return fatal(rec, res);
    }

    const refusal = opts.refuse?.[key];
    if (refusal) {
      rec.reason = 'invalid';
      return send(rec, res, 422, refusal);
    }
    const force = looseYes(b.__force_update) || rec.query.get('__force_update') === 'yes';
    const existing = key ? contacts.get(key) : undefined;
    const errors: Record<string, Record<string, string>> = {};
    if (!email) errors.email = { required: 'The email field is required.' };
    else if (!realEmailValid(email)) errors.email = { email: 'The email must be a valid email address.' };
    else if (existing && !force) errors.email = { unique: 'Provided email already assigned to another subscriber.' };
    // Missing status is refused even with __force_update (POST_subscribers_missing_status_force_update).
    if (typeof b.status !== 'string' || b.status === '') errors.status = { required: 'The status field is required.' };
    if (Object.keys(errors).length) {
      rec.reason = 'invalid';
      return send(rec, res, 422, errors);
    }
    // An unknown status value is stored as subscribed (POST_subscribers_unknown_status).
    let status = (REAL_STATUSES as readonly string[]).includes(b.status as string) ? (b.status as string) : 'subscribed';
    const now = stamp();
    const c = existing ?? { ...blank(nextId++, email, status), created_at: now };
    if (existing) {
      // Subscribed sent pending stays subscribed; bounced → subscribed is applied (README, Upsert merge rules).
      if (existing.status === 'subscribed' && status === 'pending') status = 'subscribed';
    }
    c.status = status;
    for (const f of REAL_TEXT_FIELDS) {
      const v = b[f];
      // Empty strings do not blank fields (POST_subscribers_force_update_empty_first_name).
      if (typeof v === 'string' && v !== '') c[f] = v;
      else if (typeof v === 'number') c[f] = String(v);
    }
    // not captured: a date_of_birth that is not a date; kept as sent when it looks like one.
    if (typeof b.date_of_birth === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(b.date_of_birth)) c.date_of_birth = b.date_of_birth;
    // Tags and lists are added, never replaced (POST_subscribers_force_update_tags_additive).
    const addTags = 'tags' in b ? resolve(b.tags, tags) : [];
    const addLists = 'lists' in b ? resolve(b.lists, lists) : [];
    for (const id of addTags) if (!c.tags.includes(id)) c.tags.push(id);
    for (const id of addLists) if (!c.lists.includes(id)) c.lists.push(id);
    // Undefined slugs are dropped silently; values kept as strings (README, Custom fields).
    const cv = b.custom_values;
    if (cv && typeof cv === 'object' && !Array.isArray(cv)) {
      for (const [slug, value] of Object.entries(cv as Record<string, unknown>)) {
        if (!opts.fields.some((f) => f.slug === slug)) continue;
        if (Array.isArray(value)) c.custom_values[slug] = value.map((x) => String(x));
        // not captured: whether an empty custom value blanks; like the columns, it does not here.
        else if (value !== null && value !== undefined && value !== '') c.custom_values[slug] = String(value);
      }
    }
    c.updated_at = now;
    contacts.set(key, c);
    rec.reason = existing ? 'updated' : 'created';
    return send(rec, res, 200, {
      message: existing ? 'contact has been successfully updated.' : 'Successfully added the subscriber.',
      contact: contactView(c, { tags: 'tags' in b, lists: 'lists' in b }),
      action_type: existing ? 'updated' : 'created',
      __bench: 0.03,
    });
  };

  /** PUT /subscribers/{id} (PUT_subscribers_*): fields at the top or under `subscriber`, attach/detach of tags and lists. */
  const update = (rec: RealRequest, res: ServerResponse, id: number, b: Record<string, unknown>): void => {
    const c = [...contacts.values()].find((x) => x.id === id);
    if (!c) return send(rec, res, 404, { message: 'No query results for model [FluentCrm\\App\\Models\\Subscriber].' });
    const data = (b.subscriber && typeof b.subscriber === 'object' ? b.subscriber : b) as Record<string, unknown>;
    if (typeof data.email === 'string' && data.email.toLowerCase() !== c.email.toLowerCase()) {
      if (contacts.has(data.email.toLowerCase())) {
        rec.reason = 'invalid';
        return send(rec, res, 422, { email: { unique: 'Provided email already assigned to another subscriber.' } });
      }
      contacts.delete(c.email.toLowerCase());
      c.email = data.email;
      contacts.set(c.email.toLowerCase(), c);
    }
    let dirty = false;
    for (const f of REAL_TEXT_FIELDS)
      if (typeof data[f] === 'string' && data[f] !== c[f]) {
        c[f] = data[f];
        dirty = true;
      }
    if (typeof data.status === 'string' && (REAL_STATUSES as readonly string[]).includes(data.status) && data.status !== c.status) {
      c.status = data.status;
      dirty = true;
    }
    for (const id2 of resolve(b.attach_tags, tags)) if (!c.tags.includes(id2)) c.tags.push(id2);
    for (const id2 of resolve(b.attach_lists, lists)) if (!c.lists.includes(id2)) c.lists.push(id2);
    const dt = resolve(b.detach_tags, tags);
    const dl = resolve(b.detach_lists, lists);
    c.tags = c.tags.filter((x) => !dt.includes(x));
    c.lists = c.lists.filter((x) => !dl.includes(x));
    // Tag and list changes alone leave updated_at alone (site-ny README).
    if (dirty) c.updated_at = stamp();
    rec.reason = 'updated';
    return send(rec, res, 200, { message: 'Subscriber successfully updated', contact: contactView(c, { tags: true, lists: true }), isDirty: dirty, values: [], __bench: 0.02 });
  };

  const handle = (rec: RealRequest, res: ServerResponse): void => {
    const override = String(rec.headers['x-http-method-override'] ?? rec.query.get('_method') ?? '').toUpperCase();
    const method = rec.method === 'POST' && override ? override : rec.method;
    const path = rec.path;
    if (path.startsWith('!')) return send(rec, res, 404, { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } });
    const knownRoute = /^\/(subscribers(\/\d+)?|tags|lists|custom-fields\/contacts|reports\/ping)$/.test(path);
    if (!knownRoute) return noRoute(rec, res); // even without auth (README, Auth)
    const authz = rec.headers.authorization;
    if (authz !== adminAuth) {
      if (editorAuth !== undefined && authz === editorAuth) {
        rec.reason = 'forbidden';
        return wpError(rec, res, 403, 'rest_forbidden', 'Sorry, you are not allowed to do that.');
      }
      // Wrong application password and unknown user alike: 401 rest_forbidden, no WWW-Authenticate.
      rec.reason = 'unauthorized';
      return wpError(rec, res, 401, 'rest_forbidden', 'Sorry, you are not allowed to do that.');
    }
    const body = rec.body;
    if (rec.raw && body === undefined && /json/i.test(String(rec.headers['content-type'] ?? ''))) {
      return send(rec, res, 400, { code: 'rest_invalid_json', message: 'Invalid JSON body passed.', data: { status: 400, json_error_code: 4, json_error_message: 'Syntax error' } });
    }
    const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>;

    if (path === '/reports/ping' && method === 'GET') return send(rec, res, 200, { message: 'pong', __bench: 0.01 });
    if (path === '/custom-fields/contacts' && method === 'GET') return send(rec, res, 200, { fields: opts.fields, __bench: 0.02 });
    if (path === '/tags' && method === 'GET') {
      const search = rec.query.get('search')?.toLowerCase();
      const rows = sortTaxa(rec, tags).filter((t) => !search || t.title.toLowerCase().includes(search) || t.slug.includes(search));
      const extra = rec.query.get('all_tags') === 'true' ? { all_tags: tags.map((t) => ({ id: String(t.id), title: t.title, slug: t.slug })) } : {};
      return paginate(
        rec,
        res,
        'tags',
        rows.map((t) => ({ ...taxonView(t, 'tag'), subscribersCount: [...contacts.values()].filter((c) => c.status === 'subscribed' && c.tags.includes(t.id)).length })),
        extra,
      );
    }
    if (path === '/lists' && method === 'GET') {
      // A plain array plus pagination.total; per_page/page slice it (GET_lists_per_page_2_page_2).
      // not captured: a default page size for lists; all of them come without per_page.
      const rows = sortTaxa(rec, lists).map((l) => ({
        ...taxonView(l, 'list'),
        totalCount: [...contacts.values()].filter((c) => c.lists.includes(l.id)).length,
        subscribersCount: [...contacts.values()].filter((c) => c.status === 'subscribed' && c.lists.includes(l.id)).length,
      }));
      const pp = Number(rec.query.get('per_page') ?? '0');
      const page = Math.max(1, Number(rec.query.get('page') ?? '1') || 1);
      const data = pp > 0 ? rows.slice((page - 1) * pp, page * pp) : rows;
      return send(rec, res, 200, { lists: data, pagination: { total: rows.length } });
    }
    if ((path === '/tags' || path === '/lists') && method === 'POST') {
      const from = path === '/tags' ? tags : lists;
      const title = typeof b.title === 'string' ? b.title.trim() : '';
      const slug = (typeof b.slug === 'string' && b.slug ? b.slug : title)
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '');
      if (!title) return send(rec, res, 422, { title: { required: 'The title field is required.' }, slug: { required: 'The slug field is required.' } });
      if (from.some((t) => t.slug === slug)) return send(rec, res, 422, { slug: { unique: 'The slug attribute is already taken and must be unique.' } });
      const t: RealTaxon = { id: Math.max(0, ...from.map((x) => x.id)) + 1, title, slug, description: typeof b.description === 'string' ? b.description : '' };
      from.push(t);
      const item = { title, slug, description: t.description, updated_at: stamp(), created_at: stamp(), id: t.id };
      return send(rec, res, 200, { lists: item, item, message: path === '/tags' ? 'Successfully saved the tag.' : 'Successfully saved the list.', ...(path === '/tags' ? { __bench: 0.02 } : {}) });
    }
    if (path === '/subscribers' && method === 'GET') {
      const search = rec.query.get('search')?.toLowerCase();
      let rows = [...contacts.values()].filter((c) => !search || c.email.toLowerCase().includes(search) || `${c.first_name ?? ''} ${c.last_name ?? ''}`.toLowerCase().includes(search));
      const by = rec.query.get('sort_by');
      const asc = (rec.query.get('sort_type') ?? 'DESC').toUpperCase() === 'ASC';
      rows.sort((a, b2) => a.id - b2.id);
      if (by === null || ['id', 'email', 'created_at', 'updated_at'].includes(by)) {
        if (by === 'email') rows.sort((a, b2) => a.email.localeCompare(b2.email));
        if (by === 'updated_at' || by === 'created_at') rows.sort((a, b2) => a[by].localeCompare(b2[by]) || a.id - b2.id);
        if (!asc) rows = rows.reverse();
      }
      const cf = rec.query.get('custom_fields') === 'true';
      return paginate(
        rec,
        res,
        'subscribers',
        rows.map((c) => contactView(c, { tags: true, lists: true, customFieldsKey: cf })),
        { custom: rec.query.get('custom_fields') },
      );
    }
    if (path === '/subscribers' && method === 'POST') return createOrUpdate(rec, res, b);
    const byId = /^\/subscribers\/(\d+)$/.exec(path);
    if (byId) {
      const id = Number(byId[1]);
      if (method === 'GET') {
        const byEmail = id === 0 ? rec.query.get('get_by_email')?.toLowerCase() : undefined;
        const c = id === 0 ? (byEmail ? contacts.get(byEmail) : undefined) : [...contacts.values()].find((x) => x.id === id);
        if (!c) return send(rec, res, 422, { message: 'Subscriber not found' });
        const withCv = rec.query.getAll('with[]').includes('subscriber.custom_values');
        return send(rec, res, 200, { subscriber: contactView(c, { tags: true, lists: true, customValues: withCv }), __bench: 0.02 });
      }
      if (method === 'PUT') return update(rec, res, id, b);
      if (method === 'DELETE') {
        const c = [...contacts.values()].find((x) => x.id === id);
        if (!c) return send(rec, res, 404, { message: 'No query results for model [FluentCrm\\App\\Models\\Subscriber].' });
        contacts.delete(c.email.toLowerCase());
        return send(rec, res, 200, { message: 'Selected Subscriber has been deleted successfully', __bench: 0.02 });
      }
      return noRoute(rec, res); // PATCH, or POST without an override
    }
    return noRoute(rec, res);
  };

  const server: Server = createServer((req, res) => {
    const arrivedAt = performance.now();
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      const ct = String(req.headers['content-type'] ?? '');
      if (raw && /application\/x-www-form-urlencoded/i.test(ct)) {
        const form: Record<string, unknown> = {};
        for (const [k, v] of new URLSearchParams(raw)) {
          if (k.endsWith('[]')) ((form[k.slice(0, -2)] ??= []) as unknown[]).push(v);
          else form[k] = v;
        }
        body = form;
      } else if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
      }
      // Both pretty permalinks and `?rest_route=` reach the same routes.
      const route = url.pathname.startsWith(PREFIX)
        ? url.pathname.slice(PREFIX.length) || '/'
        : url.searchParams.get('rest_route')?.startsWith('/fluent-crm/v2')
          ? url.searchParams.get('rest_route')!.slice('/fluent-crm/v2'.length)
          : `!${url.pathname}`;
      const rec: RealRequest = { seq: requests.length + 1, method: req.method ?? '', path: route, query: url.searchParams, headers: req.headers, raw, body, arrivedAt };
      requests.push(rec);
      handle(rec, res);
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return { baseUrl: `http://127.0.0.1:${port}${PREFIX}`, requests, contacts, tags, lists, options: opts, close };
}
