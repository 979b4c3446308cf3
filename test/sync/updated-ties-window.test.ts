import { describe, expect, it } from 'vitest';
import { TieTracker, windowFor } from '../../src/sync/updated-ties.js';

describe('tied updated_at groups across the scan’s pages', () => {
  it('names each group that spans a page boundary, by its positions, at or past the cutoff only', () => {
    const t = new TieTracker(50);
    t.page([90, 80, 70, 70]);
    t.page([70, 70, 60, 55]); // 70 spans pages 1-2: positions 2..5
    t.page([55, 55, 40, 40]); // 55 spans pages 2-3: positions 7..9
    t.page([40, 30, 30, 30]); // 40 spans pages 3-4 but is older than the cutoff
    expect(t.finish()).toEqual([
      { ms: 70, start: 2, end: 6 },
      { ms: 55, start: 7, end: 10 },
    ]);
  });

  it('names a group that covers a whole page, and one that ends the listing', () => {
    const t = new TieTracker(0);
    t.page([9, 5, 5]);
    t.page([5, 5, 5]);
    t.page([5, 3, 3]);
    t.page([3]);
    expect(t.finish()).toEqual([
      { ms: 5, start: 1, end: 7 },
      { ms: 3, start: 7, end: 10 },
    ]);
  });

  it('names nothing when ties stay inside their pages', () => {
    const t = new TieTracker(0);
    t.page([9, 9, 8]);
    t.page([7, 7, 6]);
    expect(t.finish()).toEqual([]);
  });

  it('finds the smallest page holding the group and two rows either side, or none past the limit', () => {
    for (const g of [
      { ms: 1, start: 18, end: 23 },
      { ms: 1, start: 0, end: 40 },
      { ms: 1, start: 4_990, end: 5_060 },
    ]) {
      const w = windowFor(g, 1_000)!;
      const first = (w.page - 1) * w.perPage;
      expect(first).toBeLessThanOrEqual(Math.max(0, g.start - 2));
      expect(first + w.perPage).toBeGreaterThanOrEqual(g.end + 2);
      expect(w.perPage).toBeLessThan(g.end - g.start + 60);
    }
    expect(windowFor({ ms: 1, start: 100, end: 1_100 }, 1_000)).toBeUndefined();
  });
});
