/**
 * A minimal CRM written from ../shared/spec/crm-rest-api.md only (not from crmsync's simulator),
 * for the endpoints `crmsync push` may use: POST /subscribers (create, create-or-update with
 * `__force_update`), the lookups of tags, lists and custom field definitions, a contact by id or by
 * email, and HTTP Basic auth. Every request is recorded with its arrival time so a test can judge,
 * from the server's side, what the CRM received.
 *
 * Where the spec is silent (it names no rate-limit values and no 429), this server uses plain HTTP:
 * a sliding one-second window, 429 with `Retry-After` in seconds and the spec's error body shape.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback } from './loopback.js';

export const CONTACT_STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'] as const;
/** Spec, Endpoints, Contacts, "Create body": the optional string fields. */
export const STRING_FIELDS = ['first_name', 'last_name', 'phone', 'address_line_1', 'address_line_2', 'city', 'state', 'country', 'postal_code'] as const;

export interface Taxon {
  id: number;
  title: string;
  slug: string;
}
/** Spec, Resources, "Custom field definition". */
export interface FieldDef {
  field_key: string;
  type: 'text' | 'textarea' | 'number' | 'date' | 'url' | 'email' | 'select-one' | 'checkbox' | 'radio';
  label: string;
  slug: string;
  options?: string[];
}

export interface StoredContact {
  id: number;
  email: string;
  status: string;
  fields: Record<string, string>;
  date_of_birth?: string;
  tags: number[];
  lists: number[];
  custom_values: Record<string, string | string[]>;
  created_at: string;
  updated_at: string;
}

export interface RecordedRequest {
  seq: number;
  method: string;
  /** Path below the base URL (without the `/wp-json/fluent-crm/v2` prefix). */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  raw: string;
  /** Parsed JSON body, or undefined. */
  body: unknown;
  /** performance.now() when the request's headers arrived. */
  arrivedAt: number;
  status?: number;
  respondedAt?: number;
  /** Seconds sent in Retry-After. */
  retryAfter?: number;
  /** Why the server answered as it did when it was not a success: 'rate_limit', 'injected_429', ... */
  reason?: string;
}

export interface PushServerOptions {
  username: string;
  password: string;
  tags: Taxon[];
  lists: Taxon[];
  fields: FieldDef[];
  /** Requests a second (sliding window over all authenticated requests); beyond it, 429. */
  maxPerSecond: number;
  /** Seconds in Retry-After on a 429. */
  retryAfterSeconds: number;
  /** 1-based numbers of POST /subscribers requests answered 429 regardless of the rate (injected). */
  inject429AtPost?: number[];
  /** An email (lower case) whose first create that passes the rate limit is answered 500 (once). */
  inject500ForEmail?: string;
  /** Emails (lower case) whose create always fails validation with 422, naming a field. */
  rejectEmails?: Record<string, { field: string; message: string }>;
}

export interface PushServer {
  baseUrl: string;
  requests: RecordedRequest[];
  contacts: Map<string, StoredContact>;
  /** Spec deviations seen in requests that the server answered anyway (encodings it tolerates). */
  notes: string[];
  close(): Promise<void>;
}

const PREFIX = '/wp-json/fluent-crm/v2';

function nowStamp(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

/** Spec, Errors: "object with `code` (string), `message` (string) and `data` {status integer}". */
function errorBody(status: number, code: string, message: string): object {
  return { code, message, data: { status } };
}

export async function startPushServer(opts: PushServerOptions): Promise<PushServer> {
  const requests: RecordedRequest[] = [];
  const contacts = new Map<string, StoredContact>();
  const notes: string[] = [];
  const accepted: number[] = []; // arrival times of requests counted against the rate limit
  let nextId = 1;
  let postCount = 0;
  let injected500 = false;
  const expectedAuth = 'Basic ' + Buffer.from(`${opts.username}:${opts.password}`).toString('base64');

  const send = (rec: RecordedRequest, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    rec.status = status;
    rec.respondedAt = performance.now();
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const tagView = (t: Taxon): object => ({ id: t.id, title: t.title, slug: t.slug, description: '', created_at: '2026-01-01 00:00:00', updated_at: '2026-01-01 00:00:00' });
  const contactView = (c: StoredContact): object => ({
    id: c.id,
    email: c.email,
    status: c.status,
    ...c.fields,
    date_of_birth: c.date_of_birth ?? null,
    full_name: [c.fields.first_name, c.fields.last_name].filter(Boolean).join(' '),
    tags: c.tags.map((id) => tagView(opts.tags.find((t) => t.id === id)!)),
    lists: c.lists.map((id) => tagView(opts.lists.find((t) => t.id === id)!)),
    custom_values: c.custom_values,
    created_at: c.created_at,
    updated_at: c.updated_at,
  });

  /** Validation of the create body as the spec words it; returns [status, code, message] or undefined. */
  const validateCreate = (b: Record<string, unknown>): [number, string, string] | undefined => {
    if (typeof b.email !== 'string' || b.email === '') return [422, 'rest_invalid_param', 'The email field is required.'];
    // Errors table: "Invalid email on a contact | 400 | rest_invalid_param".
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(b.email)) return [400, 'rest_invalid_param', 'Invalid parameter(s): email'];
    if (typeof b.status !== 'string' || b.status === '') return [422, 'rest_invalid_param', 'The status field is required.'];
    if (!(CONTACT_STATUSES as readonly string[]).includes(b.status)) return [422, 'rest_invalid_param', `The status field must be one of ${CONTACT_STATUSES.join(', ')}.`];
    for (const f of STRING_FIELDS) if (f in b && typeof b[f] !== 'string') return [422, 'rest_invalid_param', `The ${f} field must be a string.`];
    if ('date_of_birth' in b && (typeof b.date_of_birth !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(b.date_of_birth)))
      return [422, 'rest_invalid_param', 'The date_of_birth field must be YYYY-MM-DD.'];
    for (const key of ['tags', 'lists'] as const) {
      if (!(key in b)) continue;
      const v = b[key];
      const known = key === 'tags' ? opts.tags : opts.lists;
      // "tags | array of tag ids": ids are integers (Tag.id integer).
      if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x))) return [422, 'rest_invalid_param', `The ${key} field must be an array of ${key === 'tags' ? 'tag' : 'list'} ids.`];
      for (const id of v as number[]) if (!known.some((t) => t.id === id)) return [404, 'rest_post_invalid_id', `Unknown ${key === 'tags' ? 'tag' : 'list'} id ${id}.`];
    }
    if ('custom_values' in b) {
      const cv = b.custom_values;
      if (typeof cv !== 'object' || cv === null || Array.isArray(cv)) return [422, 'rest_invalid_param', 'The custom_values field must be an object.'];
      for (const [slug, value] of Object.entries(cv)) {
        const def = opts.fields.find((f) => f.slug === slug);
        // Errors table: "Unknown custom field name in custom_values | 400 | rest_invalid_param".
        if (!def) return [400, 'rest_invalid_param', `Unknown custom field custom_values.${slug}.`];
        // Create body: "custom_values | object slug to value (string or array of strings)".
        const okShape = typeof value === 'string' || (Array.isArray(value) && value.every((x) => typeof x === 'string'));
        if (!okShape) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be a string or an array of strings.`];
        const values = Array.isArray(value) ? value : [value];
        if (def.options && !values.every((x) => def.options!.includes(x))) return [400, 'rest_invalid_param', `Option not defined for custom_values.${slug}.`];
        if (def.type === 'checkbox' && !Array.isArray(value)) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be an array of option strings.`];
        if (def.type === 'number' && !/^-?\d+(\.\d+)?$/.test(value as string)) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be a number.`];
        if (def.type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value as string)) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be YYYY-MM-DD.`];
      }
    }
    return undefined;
  };

  const handle = (rec: RecordedRequest, res: ServerResponse): void => {
    const { method, path } = rec;
    if (!path.startsWith('/')) return send(rec, res, 404, errorBody(404, 'rest_no_route', 'No route was found matching the URL and request method.'));
    // Authentication 10: "missing or invalid credentials give 401".
    if (rec.headers.authorization !== expectedAuth) {
      rec.reason = 'auth';
      return send(rec, res, 401, errorBody(401, 'rest_forbidden', 'Sorry, you are not allowed to do that.'));
    }
    const now = rec.arrivedAt;
    while (accepted.length > 0 && accepted[0]! <= now - 1000) accepted.shift();
    const isPost = method === 'POST' && path === '/subscribers';
    if (isPost) postCount += 1;
    if (isPost && opts.inject429AtPost?.includes(postCount)) {
      rec.reason = 'injected_429';
      rec.retryAfter = opts.retryAfterSeconds;
      return send(rec, res, 429, errorBody(429, 'rest_too_many_requests', 'Too many requests.'), { 'Retry-After': String(opts.retryAfterSeconds) });
    }
    if (accepted.length >= opts.maxPerSecond) {
      rec.reason = 'rate_limit';
      rec.retryAfter = opts.retryAfterSeconds;
      return send(rec, res, 429, errorBody(429, 'rest_too_many_requests', 'Too many requests.'), { 'Retry-After': String(opts.retryAfterSeconds) });
    }
    accepted.push(now);

    if (method === 'GET' && path === '/tags') return send(rec, res, 200, { tags: opts.tags.map(tagView) });
    if (method === 'GET' && path === '/lists') return send(rec, res, 200, { lists: opts.lists.map((l) => ({ ...tagView(l), is_public: '0' })) });
    if (method === 'GET' && path === '/custom-fields/contacts') return send(rec, res, 200, { fields: opts.fields });
    if (method === 'GET' && path === '/reports/options') return send(rec, res, 200, { options: {} });
    const byId = /^\/subscribers\/(\d+)$/.exec(path);
    if (method === 'GET' && byId) {
      const id = Number(byId[1]);
      const email = id === 0 ? rec.query.get('get_by_email')?.toLowerCase() : undefined;
      const found = [...contacts.values()].find((c) => (id === 0 ? c.email.toLowerCase() === email : c.id === id));
      if (!found) return send(rec, res, 404, errorBody(404, 'rest_post_invalid_id', 'Invalid subscriber ID.'));
      return send(rec, res, 200, { subscriber: contactView(found) });
    }
    if (method === 'GET' && path === '/subscribers') {
      const all = [...contacts.values()];
      const perPage = Number(rec.query.get('per_page') ?? 10);
      const page = Number(rec.query.get('page') ?? 1);
      const data = all.slice((page - 1) * perPage, page * perPage).map(contactView);
      return send(rec, res, 200, {
        subscribers: { total: all.length, per_page: perPage, current_page: page, last_page: Math.ceil(all.length / perPage), from: null, to: null, next_page_url: null, prev_page_url: null, data },
      });
    }
    if (isPost) {
      const bodyEmail = (rec.body as { email?: unknown } | undefined)?.email;
      if (!injected500 && typeof bodyEmail === 'string' && bodyEmail.toLowerCase() === opts.inject500ForEmail) {
        injected500 = true;
        rec.reason = 'injected_500';
        return send(rec, res, 500, errorBody(500, 'internal_server_error', 'There has been a critical error on this website.'));
      }
      let b: Record<string, unknown>;
      try {
        b = JSON.parse(rec.raw) as Record<string, unknown>;
      } catch {
        return send(rec, res, 400, errorBody(400, 'rest_invalid_json', 'Invalid JSON body passed.'));
      }
      if (typeof b !== 'object' || b === null || Array.isArray(b)) return send(rec, res, 400, errorBody(400, 'rest_invalid_json', 'Body must be an object.'));
      const injected = typeof b.email === 'string' ? opts.rejectEmails?.[b.email.toLowerCase()] : undefined;
      if (injected) {
        rec.reason = 'injected_422';
        return send(rec, res, 422, errorBody(422, 'rest_invalid_param', injected.message));
      }
      const invalid = validateCreate(b);
      if (invalid) {
        rec.reason = 'invalid';
        return send(rec, res, invalid[0], errorBody(invalid[0], invalid[1], invalid[2]));
      }
      // Field table: "__force_update | boolean per the field table; the upsert example sends the string `yes`".
      const force = b.__force_update === true || b.__force_update === 'yes';
      if ('__force_update' in b && !force) notes.push(`__force_update sent as ${JSON.stringify(b.__force_update)}`);
      const key = (b.email as string).toLowerCase();
      const existing = contacts.get(key);
      // Rule 2: "Without it, a duplicate email yields a 409 error" (body with message and data only).
      if (existing && !force) return send(rec, res, 409, { message: 'Provided email already assigned to another subscriber.', data: { status: 409 } });
      const stamp = nowStamp();
      const c: StoredContact = existing ?? { id: nextId++, email: b.email as string, status: '', fields: {}, tags: [], lists: [], custom_values: {}, created_at: stamp, updated_at: stamp };
      c.status = b.status as string;
      for (const f of STRING_FIELDS) if (typeof b[f] === 'string') c.fields[f] = b[f];
      if (typeof b.date_of_birth === 'string') c.date_of_birth = b.date_of_birth;
      for (const id of (b.tags as number[] | undefined) ?? []) if (!c.tags.includes(id)) c.tags.push(id);
      for (const id of (b.lists as number[] | undefined) ?? []) if (!c.lists.includes(id)) c.lists.push(id);
      Object.assign(c.custom_values, b.custom_values ?? {});
      c.updated_at = stamp;
      contacts.set(key, c);
      return send(rec, res, 200, { message: existing ? 'Subscriber updated.' : 'Successfully added the subscriber.', contact: contactView(c), action_type: existing ? 'updated' : 'created' });
    }
    // This CRM holds no campaigns or funnels: Errors, "Unknown contact, tag, list, webhook, campaign,
    // funnel or sequence id | 404 | rest_post_invalid_id".
    if (method === 'GET' && /^\/(campaigns|funnels)\/\d+(\/subscribers\/\d+)?$/.test(path)) return send(rec, res, 404, errorBody(404, 'rest_post_invalid_id', 'Invalid ID.'));
    return send(rec, res, 404, errorBody(404, 'rest_no_route', 'No route was found matching the URL and request method.'));
  };

  const server: Server = createServer((req, res) => {
    const arrivedAt = performance.now();
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const path = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : `!${url.pathname}`;
      const rec: RecordedRequest = { seq: requests.length + 1, method: req.method ?? '', path, query: url.searchParams, headers: req.headers, raw, body, arrivedAt };
      requests.push(rec);
      handle(rec, res);
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}${PREFIX}`,
    requests,
    contacts,
    notes,
    close,
  };
}
