import { describe, expect, it } from 'vitest';
import { createLoadedPageSpans } from '../../src/sync/loaded-page-spans.js';

const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe('loaded page spans (which lake buckets a scan has loaded whole)', () => {
  it('calls a bucket whole once its pages and a page on each side are loaded, in any order', () => {
    const spans = createLoadedPageSpans(100);
    spans.loaded('s', 3, ids(150, 50)); // bucket 1
    spans.loaded('s', 1, ids(1, 80)); // bucket 0
    expect(spans.whole(0)).toBe(false); // page 2 may hold ids 81-99
    spans.loaded('s', 2, ids(81, 60)); // 81-140: buckets 0 and 1
    expect(spans.whole(0)).toBe(true); // page 1 starts the scan
    expect(spans.whole(1)).toBe(false); // page 4 may hold ids up to 199
    spans.loaded('s', 4, ids(260, 10)); // bucket 2
    expect(spans.whole(1)).toBe(true);
    expect(spans.whole(2)).toBe(false);
  });

  it('does not call a bucket whole with a page missing among its pages, or none below it', () => {
    const spans = createLoadedPageSpans(100);
    spans.loaded('s', 5, ids(500, 30));
    spans.loaded('s', 7, ids(560, 30));
    spans.loaded('s', 8, ids(700, 1));
    expect(spans.whole(5)).toBe(false); // page 6 is missing, page 4 too
    spans.loaded('s', 6, ids(530, 30));
    expect(spans.whole(5)).toBe(false); // page 4 is not loaded: it may hold ids of bucket 5
    spans.loaded('s', 4, ids(420, 40));
    expect(spans.whole(5)).toBe(true);
    expect(spans.whole(4)).toBe(false); // page 3 is not loaded
    expect(spans.whole(9)).toBe(false); // nothing seen
  });

  it('forgets the pages of an earlier scan, and takes a page loaded again (a retry) once', () => {
    const spans = createLoadedPageSpans(100);
    spans.loaded('a', 1, ids(1, 100));
    spans.loaded('a', 2, ids(101, 100));
    expect(spans.whole(0)).toBe(true);
    spans.loaded('b', 2, ids(101, 100));
    expect(spans.whole(0)).toBe(false);
    expect(spans.whole(1)).toBe(false);
    spans.loaded('b', 1, ids(1, 100));
    spans.loaded('b', 1, ids(1, 100));
    spans.loaded('b', 3, ids(201, 100));
    expect(spans.whole(1)).toBe(true);
    // An empty page (past the end) says nothing.
    spans.loaded('b', 4, []);
    expect(spans.whole(2)).toBe(false);
  });

  it('calls the last bucket whole once the page that ends the listing is loaded', () => {
    const spans = createLoadedPageSpans(100);
    spans.loaded('s', 1, ids(1, 100));
    spans.loaded('s', 2, ids(101, 100));
    spans.loaded('s', 3, ids(201, 50));
    expect(spans.whole(2)).toBe(false); // page 4 may hold ids 251-299
    spans.loaded('s', 4, ids(251, 20), true);
    expect(spans.whole(2)).toBe(true);
    // Not before every page of the bucket is in, the listing's end notwithstanding.
    const gap = createLoadedPageSpans(100);
    gap.loaded('t', 1, ids(1, 100));
    gap.loaded('t', 3, ids(201, 20), true);
    expect(gap.whole(2)).toBe(false); // page 2 is not loaded: it may hold ids of bucket 2
    expect(gap.whole(1)).toBe(false);
    gap.loaded('t', 2, ids(101, 100));
    expect(gap.whole(1)).toBe(true);
    expect(gap.whole(2)).toBe(true);
    // A new scan forgets where the old one's listing ended.
    gap.loaded('u', 3, ids(201, 20));
    gap.loaded('u', 2, ids(101, 100));
    expect(gap.whole(2)).toBe(false);
  });
});
