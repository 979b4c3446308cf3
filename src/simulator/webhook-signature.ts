import { createHmac } from 'node:crypto';

/** `sha256=` + hex HMAC-SHA256 of `body` with `secret` (spec, Events: Signature and headers). */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * The raw body of a delivery. The payload carries a `signature` field and the header signs the
 * raw body, which cannot both cover the same bytes: the field signs the payload without the
 * field, the `X-Service-Signature` header signs the exact bytes sent (what receivers check).
 */
export function buildDeliveryBody(payload: { event: string; timestamp: string; webhook_id: number; data: unknown }, secret: string): { body: string; signature: string } {
  const inner = signBody(JSON.stringify(payload), secret);
  const body = JSON.stringify({ ...payload, signature: inner });
  return { body, signature: signBody(body, secret) };
}
