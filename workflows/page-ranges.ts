// Pure planning of contact page ranges (deterministic; used inside workflows and tested directly).

export interface PageRange {
  fromPage: number;
  toPage: number;
}

/**
 * Splits pages 1..lastPage, minus those already done, into ranges of at most `pagesPerRange`
 * consecutive pages. Done pages are skipped so that a resumed scan refetches nothing it loaded.
 */
export function planPageRanges(lastPage: number, donePages: readonly number[], pagesPerRange: number): PageRange[] {
  if (!Number.isInteger(lastPage) || lastPage < 0) throw new RangeError(`lastPage must be a non-negative integer, got ${lastPage}`);
  if (!Number.isInteger(pagesPerRange) || pagesPerRange < 1) throw new RangeError(`pagesPerRange must be >= 1, got ${pagesPerRange}`);
  const done = new Set(donePages);
  const ranges: PageRange[] = [];
  let current: PageRange | undefined;
  for (let page = 1; page <= lastPage; page++) {
    if (done.has(page)) {
      current = undefined;
      continue;
    }
    if (current && current.toPage === page - 1 && current.toPage - current.fromPage + 1 < pagesPerRange) {
      current.toPage = page;
    } else {
      current = { fromPage: page, toPage: page };
      ranges.push(current);
    }
  }
  return ranges;
}

/** Chooses a range size that gives every parallel slot several ranges (so a slow one does not stall the tail). */
export function rangeSizeFor(lastPage: number, parallelism: number, maxPagesPerRange: number): number {
  const perSlot = Math.ceil(lastPage / Math.max(1, parallelism * 4));
  return Math.max(1, Math.min(maxPagesPerRange, perSlot));
}

/** Number of pages for `total` rows at `perPage` rows a page. */
export function pagesFor(total: number, perPage: number): number {
  return total <= 0 ? 0 : Math.ceil(total / perPage);
}
