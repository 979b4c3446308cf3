import { CrmArgumentError } from './errors.js';
import { orAborted } from './or-aborted.js';
import type { PaginateOptions } from './paginate.js';
import type { Page } from './types.js';

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
