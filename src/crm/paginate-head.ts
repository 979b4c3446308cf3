import { CrmArgumentError } from './errors.js';
import { orAborted } from './or-aborted.js';
import type { PaginateOptions } from './paginate.js';
import type { Page } from './types.js';

/**
 * Rows of a scan's small first page (`headRows`) at a page size of `perPage`: 25, or the page
 * size when that is smaller. The real deployment answers 15 rows in about 33 ms and 1,000 in
 * about 242 ms (fixtures/fluentcrm-2.9/README.md, "Timings"), so 25 cost about a quarter of a
 * page of 500; a caller that passes the rows it already asked for compares with this.
 */
export function headRowsAt(perPage: number): number {
  return Math.min(25, perPage);
}

/**
 * The head page (`headRows`, see PaginateOptions) when it is the whole scan: the caller stops on
 * it, or the listing has no rows after it. Else undefined, and the scan reads its pages as usual.
 */
export async function readHead<T, P extends Page<T>>(fetchPage: (page: number, perPage: number) => Promise<P & Page<T>>, opts: PaginateOptions<T>): Promise<P | undefined> {
  const rows = opts.headRows;
  if (rows === undefined || !opts.stopAfter || (opts.startPage ?? 1) !== 1 || opts.expectedTotal !== undefined || opts.verifyBoundaries) return undefined;
  if (!Number.isInteger(rows) || rows < 1) throw new CrmArgumentError(`paginate: headRows must be a positive integer, got ${rows}`);
  if (rows >= opts.perPage) return undefined;
  const pending = fetchPage(1, rows);
  let head: P;
  try {
    head = await orAborted(pending, opts.signal);
  } finally {
    // Aborted: the request still settles before the scan ends, as every request of a scan does.
    await Promise.allSettled([pending]);
  }
  const served = head.perPage > 0 ? Math.min(rows, head.perPage) : rows;
  const ends = head.items.length === 0 || (head.total !== undefined ? head.items.length >= head.total : head.items.length < served);
  return ends || opts.stopAfter(head) ? head : undefined;
}
