import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Secret } from '../secret.js';

// A key object per secret: an HMAC keyed by it skips converting the key string on every delivery.
const keys = new WeakMap<Secret, KeyObject>();
function keyOf(secret: Secret): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret.reveal(), 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

const PREFIX = 'sha256=';
const LENGTH = PREFIX.length + 64;

/** HMAC-SHA256 of the raw body, as the CRM sends it: `sha256=<hex>`. */
export function signBody(body: Uint8Array | string, secret: Secret | string): string {
  const key = typeof secret === 'string' ? secret : secret.reveal();
  return `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
}

/**
 * True when `header` is a well-formed signature matching any of `secrets` (two during rotation).
 * Compares digests in constant time; every secret is tried so timing does not reveal which matched.
 */
export function verifySignature(body: Uint8Array, header: string, secrets: readonly Secret[]): boolean {
  // `sha256=` (any case) and 64 hex digits: hex decoding stops at the first pair that is not hex,
  // so exactly 32 bytes means all 64 were.
  const h = header.length === LENGTH ? header : header.trim();
  if (h.length !== LENGTH || !(h.startsWith(PREFIX) || h.slice(0, PREFIX.length).toLowerCase() === PREFIX)) return false;
  const given = Buffer.from(h.slice(PREFIX.length), 'hex');
  if (given.length !== 32) return false;
  let ok = false;
  for (const s of secrets) {
    const expected = createHmac('sha256', keyOf(s)).update(body).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}
