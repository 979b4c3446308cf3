import type { Logger } from '../logger.js';
import { checkEventTime, DEFAULT_EVENT_TIME_WINDOW, type EventTimeWindow } from './check-event-time.js';
import { decodeDeliveryBody } from './decode-delivery-body.js';
import { isKnownEvent } from './event-names.js';
import { parseEventTime } from './event-payload.js';
import { SpoolUnavailableError } from './errors.js';
import { readLimitedBody, type RequestBody } from './read-limited-body.js';
import type { SecretResolver } from './secret-resolver.js';
import type { AppendOutcome, Spool } from './spool.js';
import type { SpoolEntry } from './spool-frame.js';
import { verifySignature } from './verify-signature.js';
import { WebhookEnvelope } from './webhook-envelope.js';
import type { ReceiveOutcome, WebhookMetrics } from './webhook-metrics.js';

export interface WebhookRequest {
  method: string;
  /** Header names in lower case, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw body: a stream or source read only up to the limit, or bytes already read. */
  body: RequestBody;
}

export interface WebhookResponse {
  status: number;
  body: { status: string; reason?: ReceiveOutcome; message?: string };
  headers?: Record<string, string>;
}

export interface WebhookHandlerDeps {
  secrets: SecretResolver;
  /** `appendThen`, when there is one, is used instead of `append` (no promise per delivery). */
  spool: { append(entry: SpoolEntry): Promise<AppendOutcome>; appendThen?: Spool['appendThen'] };
  metrics: WebhookMetrics;
  logger?: Logger;
  /** Bodies above this size are refused with 413 (default 1 MiB). */
  maxBodyBytes?: number;
  /** How far the event's own timestamp may be from now (default: 30 h back, 5 min ahead). */
  eventTimeWindow?: EventTimeWindow;
  now?: () => number;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;
const WEBHOOK_ID = /^\d{1,15}$/;
const EVENT = /^[\x21-\x7e]{1,100}$/;
const ACCEPTED: WebhookResponse = Object.freeze({ status: 202, body: Object.freeze({ status: 'accepted' }) });
const DUPLICATE: WebhookResponse = Object.freeze({ status: 200, body: Object.freeze({ status: 'duplicate' }) });

type Headers = WebhookRequest['headers'];

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}

function reject(deps: WebhookHandlerDeps, headers: Headers, status: number, reason: ReceiveOutcome, message: string, extra?: Record<string, string>): WebhookResponse {
  const total = deps.metrics.count(reason);
  // Bounded logging under a flood of bad requests: the first ten per reason, then at 16, 32, 64...
  if (total <= 10 || (total & (total - 1)) === 0) {
    deps.logger?.info({ reason, status, total, delivery: safeId(header(headers, 'x-service-delivery')), webhookId: safeId(header(headers, 'x-service-webhook-id')) }, 'webhook delivery rejected');
  }
  return { status, body: { status: 'rejected', reason, message }, ...(extra ? { headers: extra } : {}) };
}

/** Reads the body up to `limit` bytes (null: more than that); `expected` is the declared Content-Length. */
export type ReadBody = (limit: number, expected: number | undefined, done: (err: Error | null, body: Buffer | null) => void) => void;

/** Called once with the answer, or with an error that is not the delivery's fault (a 500). */
export type Answer = (err: unknown, response?: WebhookResponse) => void;

/**
 * The ingest endpoint without a socket. Checks run in a fixed order, each with its own status, so
 * that a cheap check never waits on an expensive one: method 405, content type 415, size 413,
 * headers 400, webhook id and secret 401, signature 401, UTF-8 and nesting depth 400, JSON 400,
 * envelope 400, event time 400. Only then is the delivery written to the spool (which also
 * refuses a body it already holds under another delivery id), and 2xx is answered after the fsync
 * that covers it.
 */
export function handleWebhookRequest(req: WebhookRequest, deps: WebhookHandlerDeps): Promise<WebhookResponse> {
  return new Promise((resolve, reject) => {
    const read: ReadBody = (limit, expected, done) => {
      readLimitedBody(req.body, limit, expected).then(
        (body) => done(null, body),
        (err: Error) => done(err, null),
      );
    };
    receiveWebhook(req.method, req.headers, read, deps, (err, r) => (err === null ? resolve(r!) : reject(err)));
  });
}

/**
 * `handleWebhookRequest` with callbacks, as the HTTP server calls it: the usual delivery goes from
 * its last body chunk to the spool's queue in one synchronous run, and its answer is written from
 * the spool's completion callback, with no promise or microtask on the way (each cost the
 * receiver's thread per delivery: bench/results/notes.md, issue 17).
 */
export function receiveWebhook(method: string, headers: Headers, readBody: ReadBody, deps: WebhookHandlerDeps, answer: Answer): void {
  const limit = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  if (method !== 'POST') return answer(null, reject(deps, headers, 405, 'method_not_allowed', 'Only POST is accepted.', { allow: 'POST' }));

  const contentTypeHeader = header(headers, 'content-type');
  const contentType = contentTypeHeader === 'application/json' ? contentTypeHeader : (contentTypeHeader ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json') return answer(null, reject(deps, headers, 415, 'unsupported_media_type', 'Content-Type must be application/json.'));

  const declared = header(headers, 'content-length');
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > limit)) {
    return answer(null, reject(deps, headers, 413, 'payload_too_large', `Bodies are limited to ${limit} bytes.`, { connection: 'close' }));
  }
  readBody(limit, declared === undefined ? undefined : Number(declared), (err, body) => {
    if (err) return answer(err);
    // Runs from the body source's event: a throw here would escape every handler.
    try {
      const checked = checkDelivery(headers, body, limit, deps);
      if ('deliveryId' in checked) store(checked, headers, deps, answer);
      else answer(null, checked);
    } catch (failure) {
      answer(failure);
    }
  });
}

/** The checks after the body is read: a refusal, or the entry to store. */
function checkDelivery(headers: Headers, body: Buffer | null, limit: number, deps: WebhookHandlerDeps): WebhookResponse | SpoolEntry {
  if (body === null) return reject(deps, headers, 413, 'payload_too_large', `Bodies are limited to ${limit} bytes.`, { connection: 'close' });

  const signature = header(headers, 'x-service-signature');
  const deliveryId = header(headers, 'x-service-delivery');
  const webhookIdHeader = header(headers, 'x-service-webhook-id');
  const event = header(headers, 'x-service-event');
  if (!signature || !deliveryId || !webhookIdHeader || !event || !DELIVERY_ID.test(deliveryId) || !WEBHOOK_ID.test(webhookIdHeader) || !EVENT.test(event)) {
    return reject(deps, headers, 400, 'missing_headers', 'X-Service-Signature, X-Service-Webhook-ID, X-Service-Delivery and X-Service-Event are required.');
  }
  const webhookId = Number(webhookIdHeader);

  // On a miss, look at the secrets file once more: a rotation may have been written a moment ago.
  let secrets = deps.secrets.secretsFor(webhookId);
  let verified = secrets.length > 0 && verifySignature(body, signature, secrets);
  if (!verified && deps.secrets.refresh()) {
    secrets = deps.secrets.secretsFor(webhookId);
    verified = secrets.length > 0 && verifySignature(body, signature, secrets);
  }
  if (secrets.length === 0) return reject(deps, headers, 401, 'unknown_webhook', 'No secret is configured for this webhook id.');
  if (!verified) return reject(deps, headers, 401, 'bad_signature', 'The signature does not match the body.');

  // The same reading the applier uses (byte-order mark, UTF-8, surrogates, depth).
  const decoded = decodeDeliveryBody(body);
  if (!decoded.ok) return reject(deps, headers, 400, decoded.reason, decoded.message);
  let json: unknown;
  try {
    json = JSON.parse(decoded.text);
  } catch {
    return reject(deps, headers, 400, 'malformed_json', 'The body is not valid UTF-8 JSON.');
  }
  // The usual delivery passes a plain structural check, which also reads its event time (once);
  // anything else gets zod's verdict and message.
  let at = plainEnvelopeTime(json, event, webhookId);
  let timestamp: string;
  if (!Number.isNaN(at)) timestamp = (json as { timestamp: string }).timestamp;
  else {
    const envelope = WebhookEnvelope.safeParse(json);
    if (!envelope.success) {
      return reject(deps, headers, 400, 'invalid_envelope', `The body is not a webhook envelope: ${envelope.error.issues.map((i) => i.path.join('.') || '(body)').join(', ')}.`);
    }
    if (envelope.data.event !== event || envelope.data.webhook_id !== webhookId) {
      return reject(deps, headers, 400, 'invalid_envelope', 'The body event and webhook_id must match the X-Service-Event and X-Service-Webhook-ID headers.');
    }
    timestamp = envelope.data.timestamp;
    at = parseEventTime(timestamp);
  }
  const now = (deps.now ?? Date.now)();
  const late = checkEventTime(timestamp, now, deps.eventTimeWindow ?? DEFAULT_EVENT_TIME_WINDOW, at);
  if (late) return reject(deps, headers, 400, 'event_time_out_of_range', late);

  return { deliveryId, webhookId, event, known: isKnownEvent(event), receivedAt: now, body };
}

/** Writes the entry to the spool and answers once it is durable (or known already). */
function store(entry: SpoolEntry, headers: Headers, deps: WebhookHandlerDeps, answer: Answer): void {
  const stored = (err: Error | null, outcome?: AppendOutcome): void => {
    if (err) {
      if (!(err instanceof SpoolUnavailableError)) return answer(err);
      return answer(null, reject(deps, headers, 503, 'spool_unavailable', 'The delivery could not be stored; retry later.', { 'retry-after': '5' }));
    }
    try {
      answer(null, outcomeAnswer(entry, outcome!, deps));
    } catch (failure) {
      answer(failure);
    }
  };
  const { spool } = deps;
  if (spool.appendThen) spool.appendThen(entry, stored);
  else spool.append(entry).then((outcome) => stored(null, outcome), stored);
}

function outcomeAnswer({ event, deliveryId, webhookId, known }: SpoolEntry, outcome: AppendOutcome, deps: WebhookHandlerDeps): WebhookResponse {
  const total = deps.metrics.count(outcome);
  if (outcome === 'replayed' && (total <= 10 || (total & (total - 1)) === 0))
    deps.logger?.warn({ event, delivery: deliveryId, webhookId }, 'a stored body came again under a new delivery id (a replay); acknowledged, not stored');
  if (!known && outcome === 'accepted') deps.logger?.warn({ event, delivery: deliveryId, webhookId }, 'stored a signed delivery with an unknown event name');
  deps.logger?.debug({ outcome, event, delivery: deliveryId, webhookId }, 'webhook delivery stored');
  return outcome === 'accepted' ? ACCEPTED : DUPLICATE;
}

const ENVELOPE_EVENT = /^[a-z0-9_.-]+$/i;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * True only for a body that `WebhookEnvelope` accepts and whose event and webhook_id equal the
 * headers' (a numeric webhook_id, a string timestamp that parses, an object `data`, no or a short
 * string `signature`). False means "ask zod", not "invalid": a test holds this to zod's verdict.
 */
export function isPlainEnvelopeFor(json: unknown, event: string, webhookId: number): json is Record<string, unknown> & { timestamp: string } {
  return !Number.isNaN(plainEnvelopeTime(json, event, webhookId));
}

/**
 * The event time (`parseEventTime` of the timestamp) of a body `isPlainEnvelopeFor` accepts, else
 * NaN. One parse serves both checks: `parseEventTime` is finite exactly when `Date.parse` (zod's
 * rule) is, and a test holds it to that.
 */
export function plainEnvelopeTime(json: unknown, event: string, webhookId: number): number {
  if (!isPlainObject(json)) return NaN;
  const { timestamp, signature } = json;
  const plain =
    json.event === event &&
    event.length <= 100 &&
    ENVELOPE_EVENT.test(event) &&
    json.webhook_id === webhookId &&
    Number.isSafeInteger(webhookId) &&
    webhookId >= 0 &&
    typeof timestamp === 'string' &&
    timestamp.length <= 40 &&
    isPlainObject(json.data) &&
    (signature === undefined || (typeof signature === 'string' && signature.length <= 200));
  if (!plain) return NaN;
  const at = parseEventTime(timestamp);
  return Number.isFinite(at) ? at : NaN;
}

function safeId(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  return /^[\w.:-]{1,200}$/.test(v) ? v : '(malformed)';
}
