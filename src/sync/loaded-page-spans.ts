/**
 * Which lake buckets a scan has loaded whole, from the pages loaded so far: a scan reads contacts
 * id ascending, so the ids of page n all lie between those of pages n - 1 and n + 1. A bucket is
 * whole once the pages that hold its ids are all loaded and so is a page on each side of them
 * that does not (or the run of pages starts at page 1, or ends on the listing's last page): no
 * other page can hold one of its ids.
 *
 * The contact sink publishes such a bucket at once instead of waiting for it to turn cold: at a
 * scan's end the ranges still running are spread over the last pages, and every bucket above the
 * lowest of them was left to the finish (bench/results/notes.md, "smaller lake buckets").
 * A row that drift moved after its bucket went out only makes the bucket dirty again: the lake
 * is always published from `_lake_dirty`, this only says when.
 */
export interface LoadedPageSpans {
  /**
   * Notes a loaded page of scan `scanKey` and the ids it held (a new scan key forgets the old
   * scan's pages); `endsListing`: the listing has no rows after this page (its reported total).
   */
  loaded(scanKey: string, page: number, ids: readonly number[], endsListing?: boolean): void;
  /** Whether every id of `bucket` (ids `bucket * size` to `(bucket + 1) * size - 1`) is on pages loaded so far. */
  whole(bucket: number): boolean;
  /** Whether every page of the listing, through the one that ended it, is loaded: the scan has nothing left to fetch. */
  allLoaded(): boolean;
}

export function createLoadedPageSpans(bucketSize: number): LoadedPageSpans {
  let scan: string | undefined;
  /** Pages loaded so far. */
  const pages = new Set<number>();
  /** The listing's last page, once a page said it was (its bucket needs no page above it); the highest such. */
  let endPage = 0;
  /** Bucket -> the loaded pages holding some of its ids. */
  const pagesOf = new Map<number, Set<number>>();

  return {
    loaded(scanKey, page, ids, endsListing = false) {
      if (scanKey !== scan) {
        scan = scanKey;
        pages.clear();
        pagesOf.clear();
        endPage = 0;
      }
      if (endsListing) endPage = Math.max(endPage, page);
      if (ids.length === 0 || pages.has(page)) return;
      let [lo, hi] = [Infinity, -Infinity];
      for (const id of ids) {
        if (id < lo) lo = id;
        if (id > hi) hi = id;
      }
      pages.add(page);
      for (let b = Math.floor(lo / bucketSize); b <= Math.floor(hi / bucketSize); b++) {
        const holding = pagesOf.get(b) ?? new Set<number>();
        holding.add(page);
        pagesOf.set(b, holding);
      }
    },
    whole(bucket) {
      const holding = pagesOf.get(bucket);
      if (!holding || holding.size === 0) return false;
      let [first, last] = [Infinity, -Infinity];
      for (const p of holding) {
        if (p < first) first = p;
        if (p > last) last = p;
      }
      // The pages holding its ids are a run with no page missing, bounded on both sides.
      if (last - first + 1 !== holding.size) return false;
      return (first === 1 || pages.has(first - 1)) && (pages.has(last + 1) || last === endPage);
    },
    allLoaded() {
      if (endPage === 0 || pages.size < endPage) return false;
      for (let p = 1; p <= endPage; p++) if (!pages.has(p)) return false;
      return true;
    },
  };
}
