import { describe, expect, it } from 'vitest';
import { IdSet } from '../../src/crm/id-set.js';

describe('IdSet', () => {
  it('behaves as a Set of ids: integers in and out of the bitmap, strings, odd numbers', () => {
    const ids = new IdSet();
    const ref = new Set<number | string>();
    let x = 7;
    const next = () => (x = (x * 1_103_515_245 + 12_345) % 2 ** 31);
    const values: Array<number | string> = [0, -0, 1, 31, 32, 33, 2 ** 25 - 1, 2 ** 25, 2 ** 31, Number.MAX_SAFE_INTEGER, -1, 1.5, NaN, '1', '0', 'abc', ''];
    for (let i = 0; i < 20_000; i++) {
      const r = next();
      values.push(r % 3 === 0 ? r % 5000 : r % 3 === 1 ? r % 100_000 : String(r % 300));
    }
    for (const v of [...values, ...values.slice(0, 500)]) {
      expect(ids.has(v), String(v)).toBe(ref.has(v));
      const added = !ref.has(v);
      ref.add(v);
      expect(ids.add(v), String(v)).toBe(added);
      expect(ids.size).toBe(ref.size);
    }
    for (const v of [5001, 99_999, 2 ** 24, '5001', 0.5]) expect(ids.has(v)).toBe(ref.has(v));
  });
});
