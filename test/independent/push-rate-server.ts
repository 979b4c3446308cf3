/**
 * A CRM for `crmsync push` at scale that limits its request rate and misbehaves, written from
 * ../shared/spec/crm-rest-api.md (not from crmsync's simulator or code) for the endpoints a push may
 * use: `POST /subscribers` (create-or-update with `__force_update`), `GET /subscribers` (listing,
 * `search`), `GET /subscribers/{id}` and `/subscribers/0?get_by_email=`, `GET /tags`, `GET /lists`,
 * `POST /tags`, `POST /lists`, `GET /custom-fields/contacts` and `GET /reports/options` (the
 * credential check), with HTTP Basic auth.
 *
 * The spec names no rate-limit values and no 429 ("Rate limit values: not shown"), and the real
 * deployment showed none (fixtures README: "Rate limiting | None seen"): this server plays a CRM
 * behind a limiting proxy, in plain HTTP terms:
 * - a token bucket over every authenticated request (`ratePerSecond`, `burst`); a request finding no
 *   token is answered 429 with `Retry-After: <seconds>` and the spec's error body shape;
 * - faults on `POST /subscribers` that passed the limit, chosen per email and attempt so a run is
 *   reproducible: 500/502/503 answers, a connection reset before anything is written, an answer
 *   lost AFTER the contact was written (reset after the write), and slow answers (1-3 s, the write
 *   done when the answer goes out).
 * Every request is recorded with its arrival time on this server's clock (performance.now()), what
 * was answered and when, and how many requests were in flight at once (arrival to answer or reset).
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { listenOnLoopback } from './loopback.js';

export const CONTACT_STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'] as const;
/** Spec, Endpoints, Contacts, "Create body": the optional string fields. */
export const STRING_FIELDS = ['first_name', 'last_name', 'phone', 'address_line_1', 'address_line_2', 'city', 'state', 'country', 'postal_code'] as const;
/** Spec, Contacts, "Create body": every field a create may carry. */
export const CREATE_FIELDS = new Set<string>(['email', 'status', ...STRING_FIELDS, 'date_of_birth', 'tags', 'lists', 'custom_values', '__force_update']);

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
  /** How many accepted writes (create or update) this contact got. */
  writes: number;
}

export type Fault = 'http429' | 'http500' | 'http502' | 'http503' | 'reset' | 'lost_after_write' | 'slow';

export interface RateRequest {
  seq: number;
  method: string;
  /** Path below the base URL, or `!<path>` outside it. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** Lower-cased `email` of a POST /subscribers body, or ''. */
  email: string;
  /** performance.now() when the request's headers arrived. */
  arrivedAt: number;
  /** Requests in flight on arrival, this one included. */
  inFlightAtArrival: number;
  status?: number;
  /** When the answer was written, or the connection destroyed. */
  doneAt?: number;
  /** Seconds sent in Retry-After. */
  retryAfter?: number;
  /** 'rate_limit', a Fault, 'invalid', 'injected_422', 'created', 'updated', 'auth', 'client_gone' ... */
  reason?: string;
  /** The contact was written by this request (also when its answer was lost). */
  wrote?: boolean;
  /** The client got a 2xx answer for it (written completely). */
  delivered?: boolean;
}

export interface RateServerOptions {
  username: string;
  password: string;
  tags: Taxon[];
  lists: Taxon[];
  fields: FieldDef[];
  /** Token bucket refill rate, requests a second. */
  ratePerSecond: number;
  /** Token bucket size (the burst the limit allows). */
  burst: number;
  /**
   * 'token-bucket' (default): `ratePerSecond` tokens a second, at most `burst` saved up, Retry-After
   * from `retryAfterSeconds`. 'fixed-window': at most `ratePerSecond` requests in each second of
   * this server's clock, Retry-After the seconds left in the window (rounded up: 1).
   */
  limiter?: 'token-bucket' | 'fixed-window';
  /** Seconds in Retry-After on a 429 of the token bucket, cycled. */
  retryAfterSeconds: number[];
  /**
   * Share (0..1) of emails that meet each fault on their first POST that passes the rate limit
   * (an email meets at most one kind; `repeat` of them meet it on their second such POST too).
   */
  faults?: Partial<Record<Fault, number>>;
  /** Of the faulted emails, share that meet the fault on the second attempt too. */
  repeatShare?: number;
  /** Slow answers take this long (ms, uniform by email). */
  slowMs?: [number, number];
  /** Every other POST /subscribers is answered after this long (ms, uniform by email and attempt). */
  latencyMs?: [number, number];
  /** Send Retry-After as an HTTP-date (RFC 9110 10.2.3) instead of seconds. */
  retryAfterAsDate?: boolean;
  /** Retry-After seconds of an injected 429 (`http429`) and of a 503. */
  injectedRetryAfterSeconds?: number;
  /** Emails (lower case) whose create always fails validation with 422, naming a field. */
  rejectEmails?: Record<string, { field: string; message: string }>;
  /** Called after each write of a contact whose answer is delivered (for a test's trigger). */
  onDelivered?: (email: string) => void;
}

export interface RateServer {
  baseUrl: string;
  requests: RateRequest[];
  contacts: Map<string, StoredContact>;
  /** Largest number of requests in flight at once. */
  maxInFlight(): number;
  /** The fault an email meets on its n-th (1-based) POST that passes the limit, if any. */
  faultFor(email: string, attempt: number): Fault | undefined;
  /** Turn the fault injection off (true) or back on. */
  setFaultsOff(off: boolean): void;
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

/** A number in [0, 1) from a text, stable across runs. */
function unit(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32;
}

export async function startRateServer(opts: RateServerOptions): Promise<RateServer> {
  const requests: RateRequest[] = [];
  const contacts = new Map<string, StoredContact>();
  const tags = opts.tags.map((t) => ({ ...t }));
  const lists = opts.lists.map((t) => ({ ...t }));
  const passedPosts = new Map<string, number>(); // POSTs per email that passed the rate limit
  let nextId = 1;
  let inFlight = 0;
  let maxInFlight = 0;
  let faultsOff = false;
  let retryAfterIndex = 0;
  // Token bucket.
  let tokens = opts.burst;
  let refilledAt = performance.now();
  const startedAt = refilledAt;
  let windowIndex = -1;
  let windowCount = 0;
  const expectedAuth = 'Basic ' + Buffer.from(`${opts.username}:${opts.password}`).toString('base64');
  const retryAfterHeader = (seconds: number): string => (opts.retryAfterAsDate ? new Date(Date.now() + seconds * 1000).toUTCString() : String(seconds));
  const faultKinds = Object.entries(opts.faults ?? {}) as Array<[Fault, number]>;

  const faultFor = (email: string, attempt: number): Fault | undefined => {
    if (attempt > 2) return undefined;
    const u = unit(`fault:${email}`);
    let acc = 0;
    for (const [kind, share] of faultKinds) {
      acc += share;
      if (u < acc) {
        if (attempt === 1) return kind;
        return unit(`repeat:${email}`) < (opts.repeatShare ?? 0) ? kind : undefined;
      }
    }
    return undefined;
  };

  const finish = (rec: RateRequest): void => {
    if (rec.doneAt !== undefined) return;
    rec.doneAt = performance.now();
    inFlight -= 1;
  };

  const send = (rec: RateRequest, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    if (rec.doneAt !== undefined) return; // the client went away before
    rec.status = status;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
    finish(rec);
  };

  const reset = (rec: RateRequest, req: IncomingMessage): void => {
    finish(rec);
    req.socket.destroy();
  };

  const taxonView = (t: Taxon): object => ({ id: t.id, title: t.title, slug: t.slug, description: '', created_at: '2026-01-01 00:00:00', updated_at: '2026-01-01 00:00:00' });
  const contactView = (c: StoredContact): object => ({
    id: c.id,
    email: c.email,
    status: c.status,
    ...c.fields,
    date_of_birth: c.date_of_birth ?? null,
    full_name: [c.fields.first_name, c.fields.last_name].filter(Boolean).join(' '),
    tags: c.tags.map((id) => taxonView(tags.find((t) => t.id === id)!)),
    lists: c.lists.map((id) => taxonView(lists.find((t) => t.id === id)!)),
    custom_values: c.custom_values,
    created_at: c.created_at,
    updated_at: c.updated_at,
  });

  /** Validation of the create body as the spec words it; returns [status, code, message] or undefined. */
  const validateCreate = (b: Record<string, unknown>): [number, string, string] | undefined => {
    if (typeof b.email !== 'string' || b.email === '') return [422, 'rest_invalid_param', 'The email field is required.'];
    // Errors table: "Invalid email on a contact | 400 | rest_invalid_param".
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(b.email)) return [400, 'rest_invalid_param', 'Invalid parameter(s): email'];
    if (typeof b.status !== 'string' || !(CONTACT_STATUSES as readonly string[]).includes(b.status))
      return [422, 'rest_invalid_param', `The status field must be one of ${CONTACT_STATUSES.join(', ')}.`];
    for (const f of STRING_FIELDS) if (f in b && typeof b[f] !== 'string') return [422, 'rest_invalid_param', `The ${f} field must be a string.`];
    if ('date_of_birth' in b && (typeof b.date_of_birth !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(b.date_of_birth)))
      return [422, 'rest_invalid_param', 'The date_of_birth field must be YYYY-MM-DD.'];
    for (const key of ['tags', 'lists'] as const) {
      if (!(key in b)) continue;
      const v = b[key];
      const known = key === 'tags' ? tags : lists;
      // "tags | array of tag ids": ids are integers (Tag.id integer).
      if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x))) return [422, 'rest_invalid_param', `The ${key} field must be an array of ids.`];
      for (const id of v as number[]) if (!known.some((t) => t.id === id)) return [404, 'rest_post_invalid_id', `Unknown ${key} id ${id}.`];
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
        // Errors table: "Option not defined for a select field | 400".
        if (def.options && !values.every((x) => def.options!.includes(x))) return [400, 'rest_invalid_param', `Option not defined for custom_values.${slug}.`];
        if (def.type === 'checkbox' && !Array.isArray(value)) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be an array of option strings.`];
        if (def.type === 'number' && !/^-?\d+(\.\d+)?$/.test(value as string)) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be a number.`];
        if (def.type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value as string)) return [422, 'rest_invalid_param', `The custom_values.${slug} field must be YYYY-MM-DD.`];
      }
    }
    return undefined;
  };

  /** Rule 1 of the create: with `__force_update` set, a create for an existing email updates it. */
  const write = (b: Record<string, unknown>): { contact: StoredContact; action: 'created' | 'updated' } => {
    const key = (b.email as string).toLowerCase();
    const existing = contacts.get(key);
    const stamp = nowStamp();
    const c: StoredContact = existing ?? { id: nextId++, email: b.email as string, status: '', fields: {}, tags: [], lists: [], custom_values: {}, created_at: stamp, updated_at: stamp, writes: 0 };
    c.status = b.status as string;
    for (const f of STRING_FIELDS) if (typeof b[f] === 'string') c.fields[f] = b[f];
    if (typeof b.date_of_birth === 'string') c.date_of_birth = b.date_of_birth;
    for (const id of (b.tags as number[] | undefined) ?? []) if (!c.tags.includes(id)) c.tags.push(id);
    for (const id of (b.lists as number[] | undefined) ?? []) if (!c.lists.includes(id)) c.lists.push(id);
    Object.assign(c.custom_values, b.custom_values ?? {});
    c.updated_at = stamp;
    c.writes += 1;
    contacts.set(key, c);
    return { contact: c, action: existing ? 'updated' : 'created' };
  };

  const handlePost = (rec: RateRequest, req: IncomingMessage, res: ServerResponse): void => {
    const b = rec.body;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) return send(rec, res, 400, errorBody(400, 'rest_invalid_json', 'Invalid JSON body passed.'));
    const body = b as Record<string, unknown>;
    const attempt = (passedPosts.get(rec.email) ?? 0) + 1;
    passedPosts.set(rec.email, attempt);
    const fault = faultsOff || rec.email === '' ? undefined : faultFor(rec.email, attempt);
    const injected = opts.rejectEmails?.[rec.email];
    if (injected) {
      rec.reason = 'injected_422';
      return send(rec, res, 422, errorBody(422, 'rest_invalid_param', injected.message));
    }
    const invalid = validateCreate(body);
    if (invalid) {
      rec.reason = 'invalid';
      return send(rec, res, invalid[0], errorBody(invalid[0], invalid[1], invalid[2]));
    }
    // Field table: "__force_update | boolean per the field table; the upsert example sends the string `yes`".
    const force = body.__force_update === true || body.__force_update === 'yes';
    if (!force && contacts.has(rec.email)) {
      rec.reason = 'duplicate';
      // Rule 2: "Without it, a duplicate email yields a 409 error" (body with message and data only).
      return send(rec, res, 409, { message: 'Provided email already assigned to another subscriber.', data: { status: 409 } });
    }
    if (fault === 'http429') {
      const seconds = opts.injectedRetryAfterSeconds ?? 2;
      rec.reason = 'injected_429';
      rec.retryAfter = seconds;
      return send(rec, res, 429, errorBody(429, 'rest_too_many_requests', 'Too many requests.'), { 'Retry-After': retryAfterHeader(seconds) });
    }
    if (fault === 'http500' || fault === 'http502' || fault === 'http503') {
      rec.reason = fault;
      const status = Number(fault.slice(4));
      const headers: Record<string, string> = {};
      if (status === 503) {
        rec.retryAfter = opts.injectedRetryAfterSeconds ?? 2;
        headers['Retry-After'] = retryAfterHeader(rec.retryAfter);
      }
      return send(rec, res, status, errorBody(status, 'internal_server_error', 'There has been a critical error on this website.'), headers);
    }
    if (fault === 'reset') {
      rec.reason = 'reset';
      return reset(rec, req);
    }
    const answer = (): void => {
      if (rec.doneAt !== undefined) {
        // The client gave up (its own timeout) before the slow answer: the write still happens, as
        // a server that finishes its request after the client left would do.
        rec.reason = `${rec.reason ?? ''}+client_gone`;
        write(body);
        rec.wrote = true;
        return;
      }
      const { contact, action } = write(body);
      rec.wrote = true;
      if (fault === 'lost_after_write') {
        rec.reason = 'lost_after_write';
        return reset(rec, req);
      }
      rec.reason = fault === 'slow' ? `slow+${action}` : action;
      send(rec, res, 200, { message: action === 'created' ? 'Successfully added the subscriber.' : 'Subscriber updated.', contact: contactView(contact), action_type: action });
      rec.delivered = true;
      opts.onDelivered?.(rec.email);
    };
    if (fault === 'slow') {
      const [lo, hi] = opts.slowMs ?? [1000, 3000];
      rec.reason = 'slow';
      setTimeout(answer, lo + unit(`slow:${rec.email}`) * (hi - lo));
      return;
    }
    if (opts.latencyMs) {
      const [lo, hi] = opts.latencyMs;
      setTimeout(answer, lo + unit(`latency:${rec.email}:${attempt}`) * (hi - lo));
      return;
    }
    answer();
  };

  const handle = (rec: RateRequest, req: IncomingMessage, res: ServerResponse): void => {
    const { method, path } = rec;
    if (!path.startsWith('/')) return send(rec, res, 404, errorBody(404, 'rest_no_route', 'No route was found matching the URL and request method.'));
    // Authentication 10: "missing or invalid credentials give 401".
    if (rec.headers.authorization !== expectedAuth) {
      rec.reason = 'auth';
      return send(rec, res, 401, errorBody(401, 'rest_forbidden', 'Sorry, you are not allowed to do that.'));
    }
    const now = rec.arrivedAt;
    let limited: number | undefined;
    if (opts.limiter === 'fixed-window') {
      const w = Math.floor((now - startedAt) / 1000);
      if (w !== windowIndex) {
        windowIndex = w;
        windowCount = 0;
      }
      if (windowCount >= opts.ratePerSecond) limited = Math.max(1, Math.ceil((startedAt + (w + 1) * 1000 - now) / 1000));
      else windowCount += 1;
    } else {
      tokens = Math.min(opts.burst, tokens + ((now - refilledAt) * opts.ratePerSecond) / 1000);
      refilledAt = now;
      if (tokens < 1) limited = opts.retryAfterSeconds[retryAfterIndex++ % opts.retryAfterSeconds.length]!;
      else tokens -= 1;
    }
    if (limited !== undefined) {
      rec.reason = 'rate_limit';
      rec.retryAfter = limited;
      return send(rec, res, 429, errorBody(429, 'rest_too_many_requests', 'Too many requests.'), { 'Retry-After': retryAfterHeader(limited) });
    }

    if (method === 'GET' && path === '/tags') return send(rec, res, 200, { tags: tags.map(taxonView) });
    if (method === 'GET' && path === '/lists') return send(rec, res, 200, { lists: lists.map((l) => ({ ...taxonView(l), is_public: '0' })) });
    if (method === 'POST' && (path === '/tags' || path === '/lists')) {
      const set = path === '/tags' ? tags : lists;
      const title = (rec.body as { title?: unknown } | undefined)?.title;
      if (typeof title !== 'string' || title === '') return send(rec, res, 422, errorBody(422, 'rest_invalid_param', 'The title field is required.'));
      // Errors: "Duplicate tag title | 400 | rest_invalid_param".
      if (set.some((t) => t.title.toLowerCase() === title.toLowerCase())) return send(rec, res, 400, errorBody(400, 'rest_invalid_param', 'The title has already been taken.'));
      const t = { id: Math.max(0, ...set.map((x) => x.id)) + 1, title, slug: title.toLowerCase().replace(/[^a-z0-9]+/g, '-') };
      set.push(t);
      return send(rec, res, 200, { [path.slice(1)]: taxonView(t), message: 'Successfully saved.' });
    }
    if (method === 'GET' && path === '/custom-fields/contacts') return send(rec, res, 200, { fields: opts.fields });
    if (method === 'GET' && path === '/reports/options') return send(rec, res, 200, { options: {} });
    const byId = /^\/subscribers\/(\d+)$/.exec(path);
    if (method === 'GET' && byId) {
      const id = Number(byId[1]);
      const email = id === 0 ? rec.query.get('get_by_email')?.toLowerCase() : undefined;
      const found = id === 0 ? (email ? contacts.get(email) : undefined) : [...contacts.values()].find((c) => c.id === id);
      if (!found) return send(rec, res, 404, errorBody(404, 'rest_post_invalid_id', 'Invalid subscriber ID.'));
      return send(rec, res, 200, { subscriber: contactView(found) });
    }
    if (method === 'GET' && path === '/subscribers') {
      const search = rec.query.get('search')?.toLowerCase();
      let all = [...contacts.values()].sort((a, b) => b.id - a.id);
      if (search) all = all.filter((c) => c.email.toLowerCase().includes(search) || Object.values(c.fields).some((v) => v.toLowerCase().includes(search)));
      const perPage = Number(rec.query.get('per_page') ?? 10);
      const page = Number(rec.query.get('page') ?? 1);
      const data = all.slice((page - 1) * perPage, page * perPage).map(contactView);
      return send(rec, res, 200, {
        subscribers: {
          total: all.length,
          per_page: perPage,
          current_page: page,
          last_page: Math.max(1, Math.ceil(all.length / perPage)),
          from: null,
          to: null,
          next_page_url: null,
          prev_page_url: null,
          data,
        },
      });
    }
    if (method === 'POST' && path === '/subscribers') return handlePost(rec, req, res);
    return send(rec, res, 404, errorBody(404, 'rest_no_route', 'No route was found matching the URL and request method.'));
  };

  const server: Server = createServer((req, res) => {
    const arrivedAt = performance.now();
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : `!${url.pathname}`;
    const rec: RateRequest = {
      seq: requests.length + 1,
      method: req.method ?? '',
      path,
      query: url.searchParams,
      headers: req.headers,
      body: undefined,
      email: '',
      arrivedAt,
      inFlightAtArrival: inFlight,
    };
    requests.push(rec);
    // A client that closes its connection before the answer ends the request's time in flight.
    res.on('close', () => {
      if (rec.doneAt === undefined) {
        rec.reason ??= 'client_gone';
        finish(rec);
      }
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        rec.body = raw ? JSON.parse(raw) : undefined;
      } catch {
        rec.body = undefined;
      }
      const e = (rec.body as { email?: unknown } | undefined)?.email;
      rec.email = typeof e === 'string' ? e.toLowerCase() : '';
      handle(rec, req, res);
    });
  });
  server.keepAliveTimeout = 10_000;
  const { port, close } = await listenOnLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}${PREFIX}`,
    requests,
    contacts,
    maxInFlight: () => maxInFlight,
    faultFor,
    setFaultsOff: (off) => {
      faultsOff = off;
    },
    close,
  };
}
