import type { Logger } from '../logger.js';
import { isKnownEvent } from './event-names.js';
import { SpoolUnavailableError } from './errors.js';
import { readLimitedBody, type RequestBody } from './read-limited-body.js';
import type { SecretResolver } from './secret-resolver.js';
import type { AppendOutcome } from './spool.js';
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
  spool: { append(entry: SpoolEntry): Promise<AppendOutcome> };
  metrics: WebhookMetrics;
  logger?: Logger;
  /** Bodies above this size are refused with 413 (default 1 MiB). */
  maxBodyBytes?: number;
  now?: () => number;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;
const WEBHOOK_ID = /^\d{1,15}$/;
const EVENT = /^[\x21-\x7e]{1,100}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The ingest endpoint without a socket. Checks run in a fixed order, each with its own status, so
 * that a cheap check never waits on an expensive one: method 405, content type 415, size 413,
 * headers 400, webhook id and secret 401, signature 401, JSON 400, envelope 400. Only then is the
 * delivery written to the spool, and 2xx is answered after the fsync that covers it.
 */
export async function handleWebhookRequest(req: WebhookRequest, deps: WebhookHandlerDeps): Promise<WebhookResponse> {
  const { metrics, logger } = deps;
  const limit = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const h = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
  };
  const deliveryHeader = h('x-service-delivery');
  const reject = (status: number, reason: ReceiveOutcome, message: string, headers?: Record<string, string>): WebhookResponse => {
    const total = metrics.count(reason);
    // Bounded logging under a flood of bad requests: the first ten per reason, then at 16, 32, 64...
    if (total <= 10 || (total & (total - 1)) === 0) {
      logger?.info({ reason, status, total, delivery: safeId(deliveryHeader), webhookId: safeId(h('x-service-webhook-id')) }, 'webhook delivery rejected');
    }
    return { status, body: { status: 'rejected', reason, message }, ...(headers ? { headers } : {}) };
  };

  if (req.method !== 'POST') return reject(405, 'method_not_allowed', 'Only POST is accepted.', { allow: 'POST' });

  const contentType = (h('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json') return reject(415, 'unsupported_media_type', 'Content-Type must be application/json.');

  const declared = h('content-length');
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > limit)) {
    return reject(413, 'payload_too_large', `Bodies are limited to ${limit} bytes.`, { connection: 'close' });
  }
  const body = await readLimitedBody(req.body, limit);
  if (body === null) return reject(413, 'payload_too_large', `Bodies are limited to ${limit} bytes.`, { connection: 'close' });

  const signature = h('x-service-signature');
  const webhookIdHeader = h('x-service-webhook-id');
  const event = h('x-service-event');
  if (!signature || !deliveryHeader || !webhookIdHeader || !event || !DELIVERY_ID.test(deliveryHeader) || !WEBHOOK_ID.test(webhookIdHeader) || !EVENT.test(event)) {
    return reject(400, 'missing_headers', 'X-Service-Signature, X-Service-Webhook-ID, X-Service-Delivery and X-Service-Event are required.');
  }
  const webhookId = Number(webhookIdHeader);

  // On a miss, look at the secrets file once more: a rotation may have been written a moment ago.
  let secrets = deps.secrets.secretsFor(webhookId);
  let verified = secrets.length > 0 && verifySignature(body, signature, secrets);
  if (!verified && deps.secrets.refresh()) {
    secrets = deps.secrets.secretsFor(webhookId);
    verified = secrets.length > 0 && verifySignature(body, signature, secrets);
  }
  if (secrets.length === 0) return reject(401, 'unknown_webhook', 'No secret is configured for this webhook id.');
  if (!verified) return reject(401, 'bad_signature', 'The signature does not match the body.');

  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(body));
  } catch {
    return reject(400, 'malformed_json', 'The body is not valid UTF-8 JSON.');
  }
  const envelope = WebhookEnvelope.safeParse(json);
  if (!envelope.success) {
    return reject(400, 'invalid_envelope', `The body is not a webhook envelope: ${envelope.error.issues.map((i) => i.path.join('.') || '(body)').join(', ')}.`);
  }
  if (envelope.data.event !== event || envelope.data.webhook_id !== webhookId) {
    return reject(400, 'invalid_envelope', 'The body event and webhook_id must match the X-Service-Event and X-Service-Webhook-ID headers.');
  }

  const known = isKnownEvent(event);
  let outcome: AppendOutcome;
  try {
    outcome = await deps.spool.append({ deliveryId: deliveryHeader, webhookId, event, known, receivedAt: (deps.now ?? Date.now)(), body });
  } catch (err) {
    if (!(err instanceof SpoolUnavailableError)) throw err;
    return reject(503, 'spool_unavailable', 'The delivery could not be stored; retry later.', { 'retry-after': '5' });
  }
  metrics.count(outcome);
  if (!known && outcome === 'accepted') logger?.warn({ event, delivery: deliveryHeader, webhookId }, 'stored a signed delivery with an unknown event name');
  logger?.debug({ outcome, event, delivery: deliveryHeader, webhookId }, 'webhook delivery stored');
  return outcome === 'accepted' ? { status: 202, body: { status: 'accepted' } } : { status: 200, body: { status: 'duplicate' } };
}

function safeId(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  return /^[\w.:-]{1,200}$/.test(v) ? v : '(malformed)';
}
