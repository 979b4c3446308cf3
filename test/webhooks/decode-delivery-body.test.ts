import { describe, expect, it } from 'vitest';
import { decodeDeliveryBody, MAX_JSON_DEPTH } from '../../src/webhooks/decode-delivery-body.js';

const ok = (s: string | Buffer) => decodeDeliveryBody(Buffer.isBuffer(s) ? s : Buffer.from(s));
const nest = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;

describe('decodeDeliveryBody (the reading shared by receiver and applier)', () => {
  it('ignores one leading byte-order mark, and only one', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(ok(Buffer.concat([bom, Buffer.from('{"a":1}')]))).toEqual({ ok: true, text: '{"a":1}' });
    const twice = ok(Buffer.concat([bom, bom, Buffer.from('{"a":1}')]));
    expect(twice.ok && twice.text.charCodeAt(0)).toBe(0xfeff);
  });

  it('accepts surrogate pairs and escaped backslashes, refuses lone surrogates as escapes or bytes', () => {
    expect(ok('{"s":"\\ud83d\\ude00"}').ok).toBe(true);
    expect(ok('{"s":"\\\\ud800"}').ok).toBe(true);
    expect(ok('{"s":"\\u00e9\\n"}').ok).toBe(true);
    for (const lone of ['{"s":"\\ud800"}', '{"s":"\\uDBFFx"}', '{"s":"\\ude00"}', '{"s":"\\ud800\\u0041"}', '{"s":"a\\ud800"}']) {
      expect(ok(lone), lone).toMatchObject({ ok: false, reason: 'invalid_utf8' });
    }
    expect(ok(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toMatchObject({ ok: false, reason: 'invalid_utf8' });
    expect(ok(Buffer.from([0x7b, 0xff, 0x7d]))).toMatchObject({ ok: false, reason: 'invalid_utf8' });
  });

  it('limits nesting outside strings only', () => {
    expect(ok(nest(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(ok(nest(MAX_JSON_DEPTH + 1))).toMatchObject({ ok: false, reason: 'json_too_deep' });
    expect(ok(`{"a":${'{"b":'.repeat(20_000)}1${'}'.repeat(20_000)}}`)).toMatchObject({ ok: false, reason: 'json_too_deep' });
    // Many brackets, but in strings or side by side: shallow.
    expect(ok(`{"s":"${'{['.repeat(500)}","t":[${Array.from({ length: 200 }, () => '{}').join(',')}]}`).ok).toBe(true);
  });
});
