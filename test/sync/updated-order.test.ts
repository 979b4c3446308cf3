import { describe, expect, it } from 'vitest';
import { slicePages } from '../../activities/sync-contact-slice.js';
import { isNewestUpdatedFirst, updatedOrderVerdict } from '../../src/sync/updated-order.js';

const at = (...isos: string[]) => isos.map((s) => ({ updated_at: s }));

describe('updated_at ordering probe', () => {
  const desc = at('2026-11-25T17:47:35.000Z', '2026-11-25T17:47:35.000Z', '2026-11-20T10:00:00.000Z');
  const asc = at('2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z');

  it('accepts an honoured ordering, same-second ties included (no tie-breaker)', () => {
    expect(updatedOrderVerdict(desc, asc)).toBe(true);
  });

  it('rejects a CRM that ignores the parameter silently: both directions come back in one order', () => {
    // Newest ids first, whose updated_at also falls: the descending page alone would pass.
    const byIdDesc = at('2026-11-25T00:00:00.000Z', '2026-11-24T00:00:00.000Z', '2026-11-23T00:00:00.000Z');
    expect(isNewestUpdatedFirst(byIdDesc)).toBe(true);
    expect(updatedOrderVerdict(byIdDesc, byIdDesc)).toBe(false);
    // Rows in no updated order at all.
    expect(updatedOrderVerdict(at('2026-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'), asc)).toBe(false);
  });

  it('rejects too few rows to tell, and rows without updated_at', () => {
    expect(updatedOrderVerdict([], asc)).toBe(false);
    expect(updatedOrderVerdict(at('2026-01-01T00:00:00.000Z'), at('2026-01-01T00:00:00.000Z'))).toBe(false);
    expect(updatedOrderVerdict([{ updated_at: null }, ...desc], asc)).toBe(false);
  });

  it('checks a page against the one before it', () => {
    expect(isNewestUpdatedFirst(at('2026-11-20T10:00:00.000Z'), Date.parse('2026-11-20T10:00:00.000Z'))).toBe(true);
    expect(isNewestUpdatedFirst(at('2026-11-21T10:00:00.000Z'), Date.parse('2026-11-20T10:00:00.000Z'))).toBe(false);
  });
});

describe('rolling sweep slice', () => {
  it('spreads the id-ascending pages over the configured runs', () => {
    expect(slicePages(400, 50, 4)).toBe(2);
    expect(slicePages(401, 50, 4)).toBe(3);
    expect(slicePages(100_000, 250, 96)).toBe(5);
    expect(slicePages(0, 250, 96)).toBe(1);
    expect(slicePages(10, 250, 0)).toBe(1);
  });
});
