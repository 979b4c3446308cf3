/**
 * A webhook sender written from ../shared/spec/crm-rest-api.md, Events, alone:
 *
 * - Payload: "JSON object with `event` (string), `timestamp` (ISO 8601 UTC), `webhook_id` (integer),
 *   `data` (object), `signature` (string `sha256=<hex>`)".
 * - Signature and headers 1: "HMAC-SHA256, hex-encoded, over the raw request body using the webhook
 *   secret, prefixed with `sha256=`. Receivers compare it with the signature header."
 * - Signature and headers 2: `Content-Type: application/json`; `User-Agent` identifying the service
 *   at version 1.0; `X-Service-Event`; `X-Service-Signature`; `X-Service-Webhook-ID`;
 *   `X-Service-Delivery` (delivery id).
 * - Delivery rules 1: the receiver must answer 2xx within 30 seconds; anything else is a failed
 *   delivery, retried (rule 2) and counted towards disabling the webhook (rule 3).
 *
 * The payload carries a `signature` field, and the header signs the raw body, which cannot contain
 * its own HMAC. This sender reads the two rules literally: the body field holds the HMAC of the
 * payload without that field, and the header holds the HMAC of the exact bytes sent.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** Spec, Events, "Event names": all 30. */
export const SPEC_EVENTS = {
  contact: ['contact.created', 'contact.updated', 'contact.deleted', 'contact.status_changed', 'contact.tag_added', 'contact.tag_removed', 'contact.list_added', 'contact.list_removed'],
  email: ['email.sent', 'email.opened', 'email.clicked', 'email.bounced', 'email.spam_complaint', 'email.unsubscribed'],
  campaign: ['campaign.created', 'campaign.sent', 'campaign.paused', 'campaign.resumed'],
  funnel: ['funnel.subscriber_added', 'funnel.subscriber_completed', 'funnel.subscriber_exited', 'funnel.sequence_completed'],
  commerce: ['commerce.order_created', 'commerce.order_completed', 'commerce.order_refunded', 'commerce.revenue_recorded'],
} as const;
export const ALL_SPEC_EVENTS: string[] = Object.values(SPEC_EVENTS).flat();

export const USER_AGENT = 'Contact-Service-Webhooks/1.0';

/** `sha256=` + hex HMAC-SHA256 of `bytes` with `secret` (Signature and headers 1). */
export function sign(bytes: string | Buffer, secret: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(bytes).digest('hex');
}

/** ISO 8601 UTC with seconds and `Z`, as the spec shows webhook timestamps (`YYYY-MM-DDTHH:MM:SSZ`). */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `data` for an event as the spec shapes it (contact and email events); other groups: not shown, so a plausible object. */
export function specData(event: string, n: number): Record<string, unknown> {
  if (event.startsWith('contact.')) return { contact: { id: 100 + n, email: `c${n}@example.test`, first_name: 'Ada', last_name: 'Lovelace', status: 'subscribed', created_at: '2026-11-21 04:55:36' } };
  if (event.startsWith('email.')) return { email: { id: 500 + n, subject: 'Hello', contact_id: 100 + n, campaign_id: 7, ...(event === 'email.opened' ? { opened_at: '2026-11-21 05:00:00' } : {}) } };
  if (event.startsWith('campaign.')) return { campaign: { id: 700 + n, title: 'Launch', status: 'sent' } };
  if (event.startsWith('funnel.')) return { funnel: { id: 300 + n, title: 'Welcome' }, subscriber: { id: 100 + n } };
  return { order: { id: 9000 + n, total: '19.99', currency: 'EUR' }, contact_id: 100 + n };
}

export interface BuildOptions {
  event: string;
  webhookId: number;
  data: Record<string, unknown>;
  /** Default: now, as `YYYY-MM-DDTHH:MM:SSZ`. */
  timestamp?: string;
  secret: string;
  /** Default true: carry the payload's `signature` field (spec, Payload). */
  signatureField?: boolean;
}

/** The exact bytes of a payload, as the service would send them. */
export function buildBody(o: BuildOptions): string {
  const payload: Record<string, unknown> = { event: o.event, timestamp: o.timestamp ?? isoUtc(Date.now()), webhook_id: o.webhookId, data: o.data };
  if (o.signatureField ?? true) payload.signature = sign(JSON.stringify(payload), o.secret);
  return JSON.stringify(payload);
}

export interface SendOptions {
  url: string;
  body: string | Buffer;
  event: string;
  webhookId: number;
  deliveryId: string;
  secret: string;
  /** Replaces the computed header signature (a forged or wrong one). */
  signature?: string;
  /** Extra or replaced headers; a value of undefined removes the header. */
  headers?: Record<string, string | undefined>;
  timeoutMs?: number;
}

export interface SendResult {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

/** Posts one delivery with the spec's headers; resolves with the receiver's answer. */
export function deliver(o: SendOptions): Promise<SendResult> {
  const bytes = typeof o.body === 'string' ? Buffer.from(o.body, 'utf8') : o.body;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': o.event,
    'X-Service-Signature': o.signature ?? sign(bytes, o.secret),
    'X-Service-Webhook-ID': String(o.webhookId),
    'X-Service-Delivery': o.deliveryId,
    'Content-Length': String(bytes.length),
  };
  for (const [k, v] of Object.entries(o.headers ?? {})) {
    const key = Object.keys(headers).find((h) => h.toLowerCase() === k.toLowerCase()) ?? k;
    if (v === undefined) delete headers[key];
    else headers[key] = v;
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(o.url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers, ms: performance.now() - started }));
      res.on('error', reject);
    });
    // Delivery rules 1: the answer must come within 30 seconds.
    req.setTimeout(o.timeoutMs ?? 30_000, () => req.destroy(new Error("no answer within the spec's 30 s")));
    req.on('error', (e: NodeJS.ErrnoException) => {
      // A receiver may answer (413) and close before the whole body is written: keep its answer if one came.
      reject(e);
    });
    req.end(bytes);
  });
}

/** True when the service would count the delivery as delivered (Delivery rules 1): 2xx. */
export function delivered(r: SendResult): boolean {
  return r.status >= 200 && r.status < 300;
}
