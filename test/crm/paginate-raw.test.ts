import { describe, expect, it } from 'vitest';
import { paginate } from '../../src/crm/paginate.js';
import type { RawPage } from '../../src/crm/types.js';

/** A listing of ids 1..n served as raw pages; `beforePage` runs before each read (to delete rows mid-scan). */
function rawListing(n: number, beforePage: (page: number, ids: number[]) => void = () => undefined) {
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  return async (page: number, perPage: number): Promise<RawPage> => {
    beforePage(page, ids);
    const rows = ids.slice((page - 1) * perPage, page * perPage);
    const body = JSON.stringify({ subscribers: { total: ids.length, per_page: perPage, current_page: page, data: rows.map((id) => ({ id })) } });
    return { items: rows.map((id) => ({ id })), total: ids.length, perPage, currentPage: page, lastPage: Math.ceil(ids.length / perPage), body };
  };
}

describe('paginate over raw pages', () => {
  it('yields each page with its body, and a page re-read for rows that slid back carries that body too', async () => {
    let deleted = false;
    // Before page 2 is read, id 3 is deleted: id 11 slides back onto page 1 and would be skipped.
    const fetch = rawListing(30, (page, ids) => {
      if (page === 2 && !deleted) {
        deleted = true;
        ids.splice(2, 1);
      }
    });
    const pages: RawPage[] = [];
    for await (const p of paginate(fetch, { perPage: 10, verifyBoundaries: true, order: 'asc' })) pages.push(p);
    expect(pages.map((p) => (JSON.parse(p.body) as { subscribers: { current_page: number } }).subscribers.current_page)).toEqual([1, 2, 3]);
    const second = pages[1]!;
    expect(second.items.map((r) => r.id)).toContain(11);
    expect(second.alsoRead).toHaveLength(1);
    // The re-read page 1 holds id 11's record, so loading the bodies loads it.
    expect((JSON.parse(second.alsoRead![0]!) as { subscribers: { data: { id: number }[] } }).subscribers.data.map((r) => r.id)).toContain(11);
    expect(pages[0]!.alsoRead).toBeUndefined();
  });
});
