/**
 * A minimal CRM written from ../shared/spec/crm-rest-api.md alone (not from crmsync's simulator or
 * client), for what `crmsync webhooks register` may call: the Webhooks endpoints, with HTTP Basic
 * auth, and every request recorded.
 *
 * From the spec:
 * - Resources, Webhook: "id (integer), name, url, events (array of event names), status (active,
 *   inactive, failed), secret, created_at, updated_at"; Response conventions 5: webhooks show
 *   ISO 8601 UTC (`YYYY-MM-DDTHH:MM:SSZ`).
 * - Endpoints, Webhooks: GET /webhooks -> object `webhooks` (array); POST /webhooks with name
 *   (required), url (required, valid HTTPS URL), events (array, required), status (default active),
 *   secret -> "not shown: response body"; PUT /webhooks/{id} "any create fields" -> not shown;
 *   DELETE /webhooks/{id} -> object `webhooks` (array of webhook records) and `message`, capability
 *   crm_manage_settings; POST /webhooks/{id}/test; GET /webhooks/{id}/deliveries -> `deliveries`
 *   and `pagination` {total, per_page, current_page, last_page}.
 * - States: "Webhook | active (default on create), inactive, failed".
 * - Errors: body {code, message, data {status}}; 400 invalid_webhook_url ("Webhook URL not a valid
 *   HTTPS URL"), 400 invalid_webhook_event ("Unsupported webhook event"), 404 rest_post_invalid_id
 *   (unknown webhook id), 401 missing or invalid credentials, 403 `rest_forbidden` without the
 *   capability, 404 for a wrong path.
 * - Response conventions 7: PUT and DELETE may come as POST with `X-HTTP-Method-Override`.
 *
 * Where the spec says "not shown" (the create and update response bodies), this server answers
 * `{ webhook, message }` by default, or only `{ message }` with `createResponse: 'message'`, so a
 * test can tell whether a client leans on a shape the spec does not give.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/** Spec, Events, "Event names" (26). */
export const SPEC_EVENT_NAMES: readonly string[] = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.status_changed',
  'contact.tag_added',
  'contact.tag_removed',
  'contact.list_added',
  'contact.list_removed',
  'email.sent',
  'email.opened',
  'email.clicked',
  'email.bounced',
  'email.spam_complaint',
  'email.unsubscribed',
  'campaign.created',
  'campaign.sent',
  'campaign.paused',
  'campaign.resumed',
  'funnel.subscriber_added',
  'funnel.subscriber_completed',
  'funnel.subscriber_exited',
  'funnel.sequence_completed',
  'commerce.order_created',
  'commerce.order_completed',
  'commerce.order_refunded',
  'commerce.revenue_recorded',
];

export const WEBHOOK_STATUSES = ['active', 'inactive', 'failed'] as const;

export interface StoredWebhook {
  id: number;
  name: string;
  url: string;
  events: string[];
  status: string;
  secret: string;
  created_at: string;
  updated_at: string;
}

export interface RecordedRequest {
  seq: number;
  /** The effective verb (X-HTTP-Method-Override applied). */
  method: string;
  /** The verb on the wire. */
  wireMethod: string;
  /** Path below the base URL; `!<path>` when outside it. */
  path: string;
  /** The request target as sent (path and query). */
  url: string;
  headers: IncomingMessage['headers'];
  raw: string;
  body: unknown;
  status?: number;
  /** The response body sent. */
  response?: string;
}

export interface RegisterServerOptions {
  username: string;
  password: string;
  /** Webhooks present at start (ids are kept; new ids follow the highest). */
  webhooks?: Omit<StoredWebhook, 'created_at' | 'updated_at'>[];
  /** Create and update response body (both "not shown" in the spec). Default 'webhook'. */
  createResponse?: 'webhook' | 'message';
  /** Answer every write (POST/PUT/DELETE on /webhooks...) 403 rest_forbidden: the manager lacks the capability. */
  forbidWrites?: boolean;
  /**
   * Response conventions 4: "Identifiers appear as integers or as numeric strings ... Treat both as
   * valid." With this, every webhook id in a response is a numeric string.
   */
  idsAsStrings?: boolean;
  /**
   * Resources, Webhook, second shape ("This form belongs to inbound webhooks that create contacts.
   * Which of the two shapes each webhook endpoint returns: not shown."): a CRM whose /webhooks are
   * inbound webhooks. Listings and the delete answer show {id, object_type, key, value {name,
   * status, lists, tags, companies, url}}, and the stored url is the site's own contact-creation
   * address, not the one posted.
   */
  inbound?: boolean;
  /** The CRM has no /webhooks route at all (Authentication 10: "a wrong path, missing plugin ... gives 404"). */
  noWebhooksRoute?: boolean;
  /** Events this CRM does not support: create/update naming one is refused 400 invalid_webhook_event. */
  unsupportedEvents?: string[];
  /**
   * A careless server: every error message quotes the posted secret, the Authorization header and the raw body
   * (what a client must not pass on to its user).
   */
  echoInErrors?: boolean;
  /** Called when a request has been read, before it is handled (a test may look at files then). */
  onRequest?: (rec: RecordedRequest) => void;
}

export interface RegisterServer {
  baseUrl: string;
  requests: RecordedRequest[];
  webhooks: Map<number, StoredWebhook>;
  close(): Promise<void>;
}

const PREFIX = '/wp-json/fluent-crm/v2';

function isoNow(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Spec, Errors: "object with `code` (string), `message` (string) and `data` {status integer}". */
function errorBody(status: number, code: string, message: string): object {
  return { code, message, data: { status } };
}

type Failure = [number, string, string];

function secretOf(body: unknown): string {
  return typeof body === 'object' && body !== null && typeof (body as { secret?: unknown }).secret === 'string' ? (body as { secret: string }).secret : '';
}

/** Validation of create/update fields as the spec words them. `partial`: PUT, "any create fields". */
function validate(b: Record<string, unknown>, partial: boolean, unsupported: readonly string[]): Failure | undefined {
  if (!partial || 'name' in b) {
    if (typeof b.name !== 'string' || b.name.trim() === '') return [400, 'rest_missing_callback_param', 'Missing parameter(s): name'];
  }
  if (!partial || 'url' in b) {
    if (typeof b.url !== 'string' || b.url === '') return [400, 'rest_missing_callback_param', 'Missing parameter(s): url'];
    let u: URL | undefined;
    try {
      u = new URL(b.url);
    } catch {
      u = undefined;
    }
    // Errors: "Webhook URL not a valid HTTPS URL | 400 | invalid_webhook_url".
    if (!u || u.protocol !== 'https:' || u.hostname === '') return [400, 'invalid_webhook_url', 'The webhook URL must be a valid HTTPS URL.'];
  }
  if (!partial || 'events' in b) {
    if (!Array.isArray(b.events) || b.events.length === 0) return [400, 'rest_missing_callback_param', 'Missing parameter(s): events'];
    for (const e of b.events) {
      // Errors: "Unsupported webhook event | 400 | invalid_webhook_event".
      if (typeof e !== 'string' || !SPEC_EVENT_NAMES.includes(e) || unsupported.includes(e)) return [400, 'invalid_webhook_event', `Unsupported webhook event: ${String(e)}`];
    }
  }
  if ('status' in b && !(WEBHOOK_STATUSES as readonly string[]).includes(b.status as string)) return [400, 'rest_invalid_param', 'Invalid parameter(s): status'];
  if ('secret' in b && b.secret !== null && typeof b.secret !== 'string') return [400, 'rest_invalid_param', 'Invalid parameter(s): secret'];
  return undefined;
}

export async function startRegisterServer(opts: RegisterServerOptions): Promise<RegisterServer> {
  const requests: RecordedRequest[] = [];
  const webhooks = new Map<number, StoredWebhook>();
  const stamp = isoNow();
  for (const w of opts.webhooks ?? []) webhooks.set(w.id, { ...w, events: [...w.events], created_at: stamp, updated_at: stamp });
  let nextId = Math.max(0, ...webhooks.keys()) + 1;
  const expectedAuth = 'Basic ' + Buffer.from(`${opts.username}:${opts.password}`).toString('base64');

  const send = (rec: RecordedRequest, res: ServerResponse, status: number, body: unknown): void => {
    if (opts.echoInErrors && status >= 400 && typeof body === 'object' && body !== null && 'message' in body)
      body = { ...body, message: `${String((body as { message: unknown }).message)} (secret: ${secretOf(rec.body)}; authorization: ${rec.headers.authorization ?? ''}; body: ${rec.raw})` };
    const text = JSON.stringify(body);
    rec.status = status;
    rec.response = text;
    res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  const view = (w: StoredWebhook): object => {
    const id = opts.idsAsStrings ? String(w.id) : w.id;
    if (opts.inbound)
      return {
        id,
        object_type: 'webhook',
        key: `inbound-key-${w.id}`,
        value: { name: w.name, status: w.status, lists: [], tags: [], companies: [], url: w.url },
        created_at: w.created_at,
        updated_at: w.updated_at,
      };
    return { ...w, id, events: [...w.events] };
  };
  const noRoute = (rec: RecordedRequest, res: ServerResponse): void => send(rec, res, 404, errorBody(404, 'rest_no_route', 'No route was found matching the URL and request method.'));

  const handle = (rec: RecordedRequest, res: ServerResponse): void => {
    const { method, path } = rec;
    if (path.startsWith('!')) return noRoute(rec, res);
    // Authentication 10: "missing or invalid credentials give 401".
    if (rec.headers.authorization !== expectedAuth) return send(rec, res, 401, errorBody(401, 'rest_not_logged_in', 'You are not currently logged in.'));
    const pathOnly = path.split('?')[0]!;
    const isWrite = method !== 'GET';
    if (pathOnly === '/webhooks' || pathOnly.startsWith('/webhooks/')) {
      if (opts.noWebhooksRoute) return noRoute(rec, res);
      // Authentication 10: "a valid user without the capability gives 403"; Errors: code `rest_forbidden`.
      if (isWrite && opts.forbidWrites) return send(rec, res, 403, errorBody(403, 'rest_forbidden', 'Sorry, you are not allowed to do that.'));
    }
    if (pathOnly === '/webhooks') {
      if (method === 'GET') return send(rec, res, 200, { webhooks: [...webhooks.values()].map(view) });
      if (method === 'POST') {
        const b = rec.body;
        if (typeof b !== 'object' || b === null || Array.isArray(b)) return send(rec, res, 400, errorBody(400, 'rest_invalid_json', 'Invalid JSON body passed.'));
        const body = b as Record<string, unknown>;
        const bad = validate(body, false, opts.unsupportedEvents ?? []);
        if (bad) return send(rec, res, bad[0], errorBody(...bad));
        const now = isoNow();
        const w: StoredWebhook = {
          id: nextId++,
          name: body.name as string,
          // An inbound webhook stores the site's own contact-creation address.
          url: opts.inbound ? `https://crm.example.test/?fluentcrm=1&route=contact&hash=h${nextId}` : (body.url as string),
          events: [...(body.events as string[])],
          // States: "active (default on create)".
          status: (body.status as string | undefined) ?? 'active',
          secret: typeof body.secret === 'string' ? body.secret : '',
          created_at: now,
          updated_at: now,
        };
        webhooks.set(w.id, w);
        return send(rec, res, 200, opts.createResponse === 'message' ? { message: 'Webhook has been created' } : { webhook: view(w), message: 'Webhook has been created' });
      }
      return noRoute(rec, res);
    }
    const m = /^\/webhooks\/(\d+)(\/test|\/deliveries)?$/.exec(pathOnly);
    if (!m) return noRoute(rec, res);
    const id = Number(m[1]);
    const w = webhooks.get(id);
    // Errors: "Unknown ... webhook ... id | 404 | rest_post_invalid_id".
    if (!w) return send(rec, res, 404, errorBody(404, 'rest_post_invalid_id', 'Invalid webhook ID.'));
    if (m[2] === '/deliveries') {
      if (method !== 'GET') return noRoute(rec, res);
      return send(rec, res, 200, { deliveries: [], pagination: { total: 0, per_page: 25, current_page: 1, last_page: 1 } });
    }
    if (m[2] === '/test') {
      if (method !== 'POST') return noRoute(rec, res);
      return send(rec, res, 200, { message: 'Test payload sent' });
    }
    if (method === 'PUT' || method === 'PATCH') {
      const b = rec.body;
      if (typeof b !== 'object' || b === null || Array.isArray(b)) return send(rec, res, 400, errorBody(400, 'rest_invalid_json', 'Invalid JSON body passed.'));
      const body = b as Record<string, unknown>;
      const bad = validate(body, true, opts.unsupportedEvents ?? []);
      if (bad) return send(rec, res, bad[0], errorBody(...bad));
      if ('name' in body) w.name = body.name as string;
      if ('url' in body && !opts.inbound) w.url = body.url as string;
      if ('events' in body) w.events = [...(body.events as string[])];
      if ('status' in body) w.status = body.status as string;
      if ('secret' in body && typeof body.secret === 'string') w.secret = body.secret;
      w.updated_at = isoNow();
      return send(rec, res, 200, opts.createResponse === 'message' ? { message: 'Webhook has been updated' } : { webhook: view(w), message: 'Webhook has been updated' });
    }
    if (method === 'DELETE') {
      webhooks.delete(id);
      return send(rec, res, 200, { webhooks: [...webhooks.values()].map(view), message: 'Webhook has been deleted' });
    }
    if (method === 'GET') return send(rec, res, 200, { webhook: view(w) });
    return noRoute(rec, res);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      // Sites without pretty permalinks: ?rest_route=/fluent-crm/v2/...
      const restRoute = url.searchParams.get('rest_route');
      let path: string;
      if (url.pathname.startsWith(PREFIX)) path = url.pathname.slice(PREFIX.length) || '/';
      else if (restRoute?.startsWith('/fluent-crm/v2')) path = restRoute.slice('/fluent-crm/v2'.length) || '/';
      else path = `!${url.pathname}`;
      const override = req.headers['x-http-method-override'];
      const wireMethod = req.method ?? 'GET';
      const method = wireMethod === 'POST' && typeof override === 'string' ? override.toUpperCase() : wireMethod;
      const rec: RecordedRequest = { seq: requests.length + 1, method, wireMethod, path, url: req.url ?? '', headers: req.headers, raw, body };
      requests.push(rec);
      try {
        opts.onRequest?.(rec);
      } catch {
        // a test's observer must not change the answer
      }
      handle(rec, res);
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}${PREFIX}`,
    requests,
    webhooks,
    close,
  };
}
