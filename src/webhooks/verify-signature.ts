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

// The header's digest, decoded into one buffer for every delivery: a slice of the header and a
// Buffer per delivery were garbage for the GC (bench/results/notes.md, issue 17). The compare below
// is synchronous, so nothing else can see this buffer in between.
const given = Buffer.alloc(32);

const nibble = (c: number): number => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1);

/** Decodes the `2 * out.length` hex digits of `text` at `from` into `out`; false at a non-hex one. */
function hexInto(text: string, from: number, out: Buffer): boolean {
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(text.charCodeAt(from + 2 * i));
    const lo = nibble(text.charCodeAt(from + 2 * i + 1));
    if (hi < 0 || lo < 0) return false;
    out[i] = (hi << 4) | lo;
  }
  return true;
}

/**
 * True when `header` is a well-formed signature matching any of `secrets` (two during rotation).
 * Compares digests in constant time; every secret is tried so timing does not reveal which matched.
 */
export function verifySignature(body: Uint8Array, header: string, secrets: readonly Secret[]): boolean {
  // `sha256=` (any case) and 64 hex digits.
  const h = header.length === LENGTH ? header : header.trim();
  if (h.length !== LENGTH || !(h.startsWith(PREFIX) || h.slice(0, PREFIX.length).toLowerCase() === PREFIX)) return false;
  if (!hexInto(h, PREFIX.length, given)) return false;
  let ok = false;
  for (const s of secrets) {
    const expected = createHmac('sha256', keyOf(s)).update(body).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}
