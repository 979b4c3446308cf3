import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { signBody, verifySignature } from '../../src/webhooks/verify-signature.js';

const body = Buffer.from('{"event":"contact.updated","timestamp":"2026-11-26T17:00:00Z","webhook_id":1,"data":{}}');
const secret = new Secret('s3cret-for-the-signature-test');
const good = signBody(body, secret);
const digits = good.slice('sha256='.length);

// The digest is decoded by hand into one buffer shared by every call: these hold it to what a
// hex decoder of a fresh buffer per call accepted and refused.
describe('verifySignature', () => {
  it('accepts the signature in either case, with any-case prefix and surrounding spaces', () => {
    expect(verifySignature(body, good, [secret])).toBe(true);
    expect(verifySignature(body, `sha256=${digits.toUpperCase()}`, [secret])).toBe(true);
    expect(verifySignature(body, `SHA256=${digits}`, [secret])).toBe(true);
    expect(verifySignature(body, `  ${good} `, [secret])).toBe(true);
    expect(verifySignature(body, good, [new Secret('old-secret'), secret])).toBe(true);
  });

  it('refuses a change of any one digit, a non-hex character anywhere, and a wrong length', () => {
    for (let i = 0; i < digits.length; i++) {
      const changed = `${digits.slice(0, i)}${digits[i] === '0' ? '1' : '0'}${digits.slice(i + 1)}`;
      expect(verifySignature(body, `sha256=${changed}`, [secret]), `digit ${i}`).toBe(false);
      for (const c of ['g', 'G', ' ', '/', ':', '@', '`', '\u0660']) {
        expect(verifySignature(body, `sha256=${digits.slice(0, i)}${c}${digits.slice(i + 1)}`, [secret]), `${JSON.stringify(c)} at ${i}`).toBe(false);
      }
      // A good check in between: what a refused header left in the shared buffer must not matter.
      expect(verifySignature(body, good, [secret])).toBe(true);
    }
    expect(verifySignature(body, `sha256=${digits.slice(1)}`, [secret])).toBe(false);
    expect(verifySignature(body, `sha256=${digits}0`, [secret])).toBe(false);
    expect(verifySignature(body, `sha1=${digits}`, [secret])).toBe(false);
    expect(verifySignature(body, digits, [secret])).toBe(false);
    expect(verifySignature(body, good, [new Secret('another-secret')])).toBe(false);
    expect(verifySignature(Buffer.from(`${body.toString()} `), good, [secret])).toBe(false);
  });
});
