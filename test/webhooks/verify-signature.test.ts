import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { signBody, verifySignature } from '../../src/webhooks/verify-signature.js';
import { withTimingSafeEqualSpy } from '../helpers/timing-safe-equal-spy.js';

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

  // Timing cannot be measured reliably in a test; what decides can. A well-formed header's
  // digest is compared by crypto.timingSafeEqual, 32 bytes against 32, once for every secret
  // whether one matched or none, and its answer is the verdict: a spy that says "equal" makes
  // a wrong digest pass, which a `===` or Buffer.equals beside it would not allow. A header of
  // another length is refused before any digest: its length is the format's (sha256= and 64 hex
  // digits), public, and says nothing about the secret.
  it('decides by crypto.timingSafeEqual on 32-byte digests, once per secret, match or not', async () => {
    const secrets = [new Secret('previous-secret-value'), secret];
    const wrong = `sha256=${digits.startsWith('0') ? '1' : '0'}${digits.slice(1)}`;
    await withTimingSafeEqualSpy((calls) => {
      expect(verifySignature(body, good, secrets)).toBe(true);
      expect(verifySignature(body, wrong, secrets)).toBe(false);
      expect(calls).toHaveLength(4);
      for (const [a, b] of calls) expect([a.length, b.length]).toEqual([32, 32]);
      calls.length = 0;
      expect(verifySignature(body, `sha256=${digits.slice(2)}`, secrets)).toBe(false);
      expect(calls).toHaveLength(0);
    });
    await withTimingSafeEqualSpy(
      () => expect(verifySignature(body, wrong, [secret])).toBe(true),
      () => true,
    );
  });
});
