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

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

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
  const m = SIGNATURE.exec(header.trim());
  if (!m) return false;
  const given = Buffer.from(m[1]!.toLowerCase(), 'hex');
  let ok = false;
  for (const s of secrets) {
    const expected = createHmac('sha256', keyOf(s)).update(body).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}
