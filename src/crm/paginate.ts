import { CrmArgumentError } from './errors.js';
import { IdSet } from './id-set.js';
import { orAborted } from './or-aborted.js';
import { readHead } from './paginate-head.js';
import type { DriftEvent, Page, RawPage } from './types.js';

export interface PaginateOptions<T> {
  perPage: number;
  startPage?: number;
  /**
   * Last page to read (a range of a larger scan): the scan stops there even when the listing goes
   * on, and, as it saw only part of the listing, skips the final count check.
   */
  endPage?: number;
  /**
   * The listing's total when the whole scan began (a probe, or the first range): a first page that
   * reports another total is drift, noticed even when this call reads one range of the scan.
   */
  expectedTotal?: number;
  /**
   * The caller's end of the scan, asked of each page in order: when it returns true the page is
   * the last one yielded and no page after it is requested (a `break` would leave the pages fetched
   * ahead wasted): with it, a page is requested only once the one before has been judged, one at a
   * time. For scans that stop at a cursor, such as newest first down to the highest id held.
   */
  stopAfter?: (page: Page<T>) => boolean;
  /**
   * With `stopAfter`, a scan from page 1 asks first for page 1 with only this many rows: a small
   * page answers sooner (fixtures/fluentcrm-2.9/README.md, "Timings"). When the caller's end falls
   * on it, or the listing ends within it, it is the scan's one page; else it is dropped and the
   * scan reads from page 1 at `perPage`. For scans that usually stop on their first rows, such as
   * newest first down to the highest id held. Ignored unless below `perPage`.
   */
  headRows?: number;
  /**
   * Ends the scan: no page is requested after it fires, a page awaited rejects with its reason at
   * once, and the scan ends once the requests in flight have settled. Pass the same signal to the
   * requests (`CrmClient.withSignal`) so that those are aborted too.
   */
  signal?: AbortSignal;
  /** Pages fetched at once once the last page is known (default 1). The rate limiter still applies. */
  concurrency?: number;
  onDrift?: (e: DriftEvent) => void;
  /** Identity of a row for boundary checks (default: its numeric or string `id`). */
  idOf?: (item: T) => number | string | undefined;
  /** The listing's id order, when sorted by id: enables order checks across page boundaries. */
  order?: 'asc' | 'desc';
  /** Safety stop (default 1,000,000 pages). */
  maxPages?: number;
  /**
   * Re-read the previous page after each page (twice the requests; `concurrency` must be 1) and
   * add the rows that slid back onto it, unseen, to the current page, reported as `recovered`.
   * Repairs the skips that deletes behind the scan cause, including those no total reveals.
   */
  verifyBoundaries?: boolean;
}

const MAX_TRACKED_IDS = 2_000_000;

const defaultIdOf = (item: unknown): number | string | undefined => {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'number' || typeof id === 'string' ? id : undefined;
};

/**
 * Reads an offset-paginated listing page by page. With a known `last_page` it fetches up to
 * `concurrency` pages ahead and still yields them in order. It ends at `last_page` once it has read
 * as many rows as the listing's `total` (short of it, it reads on until an empty page); with neither
 * known, at a page shorter than the server served (its `per_page`, which a capping server lowers).
 * When the listing grows during the scan it keeps reading past the first `last_page`.
 *
 * Drift (rows inserted or deleted mid-scan shift across page boundaries) is reported, never hidden:
 * a changed `total`, ids seen on two adjacent pages, a shrinking total in an id-ordered scan (with
 * the id window where rows may have been skipped), ids out of the requested order at a boundary, and
 * at the end a difference between the final total and the distinct rows read. Each event goes to
 * `onDrift` and into the `drift` array of the page where it was noticed. Rows are yielded as received.
 * Inserts and deletes that cancel out in the total between two reads leave no trace (see README).
 */
export async function* paginate<T, P extends Page<T> = Page<T>>(fetchPage: (page: number, perPage: number) => Promise<P & Page<T>>, opts: PaginateOptions<T>): AsyncGenerator<P> {
  const head = await readHead(fetchPage, opts);
  if (head) {
    yield head;
    return;
  }
  yield* readPages(fetchPage, opts);
}

async function* readPages<T, P extends Page<T>>(fetchPage: (page: number, perPage: number) => Promise<P & Page<T>>, opts: PaginateOptions<T>): AsyncGenerator<P> {
  const perPage = opts.perPage;
  const start = opts.startPage ?? 1;
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
  const maxPages = opts.maxPages ?? 1_000_000;
  const idOf = opts.idOf ?? defaultIdOf;
  if (!Number.isInteger(perPage) || perPage < 1) throw new CrmArgumentError(`paginate: perPage must be a positive integer, got ${perPage}`);
  if (!Number.isInteger(start) || start < 1) throw new CrmArgumentError(`paginate: startPage must be >= 1, got ${start}`);
  if (opts.endPage !== undefined && !(Number.isInteger(opts.endPage) && opts.endPage >= start)) {
    throw new CrmArgumentError(`paginate: endPage must be an integer >= startPage (${start}), got ${opts.endPage}`);
  }
  if (opts.verifyBoundaries && concurrency > 1) throw new CrmArgumentError('paginate: verifyBoundaries reads page by page; drop concurrency or verifyBoundaries');

  let prev: { page: number; total: number | undefined; ids: Array<number | string> } | undefined;
  // Distinct ids read, for the final count check; capped so a multi-million-row scan stays small.
  const seen = new IdSet();
  let seenOverflow = false;
  let lastTotal: number | undefined;
  let rowsWithoutId = 0;
  let rowsRead = 0;
  let totalMoved = false;
  let repeated = false;

  function check(p: P, pageNo: number): P {
    const events: DriftEvent[] = [];
    const ids: Array<number | string> = [];
    // Ids read before (on any page, or earlier on this one): the only possible repeats of the previous page.
    let seenBefore: Array<number | string> | undefined;
    for (const item of p.items) {
      const id = idOf(item);
      if (id === undefined) rowsWithoutId++;
      else {
        ids.push(id);
        if (seen.size < MAX_TRACKED_IDS) {
          if (!seen.add(id)) (seenBefore ??= []).push(id);
        } else seenOverflow = true;
      }
    }
    if (!prev && opts.expectedTotal !== undefined && p.total !== undefined && p.total !== opts.expectedTotal) {
      totalMoved = true;
      events.push({
        kind: 'total_changed',
        page: pageNo,
        detail: `total went from ${opts.expectedTotal} when the scan began to ${p.total} by page ${pageNo}: rows were ${p.total > opts.expectedTotal ? 'added' : 'removed'} during the scan, so rows may be missed or repeated`,
        previousTotal: opts.expectedTotal,
        total: p.total,
      });
    }
    if (prev) {
      if (prev.total !== undefined && p.total !== undefined && prev.total !== p.total) {
        totalMoved = true;
        events.push({
          kind: 'total_changed',
          page: pageNo,
          detail: `total went from ${prev.total} to ${p.total} between page ${prev.page} and page ${pageNo}: rows were ${p.total > prev.total ? 'added' : 'removed'} during the scan, so rows may be missed or repeated`,
          previousTotal: prev.total,
          total: p.total,
        });
      }
      // Every id of the previous page is in `seen` unless it overflowed, so only `seenBefore` needs the
      // set of the previous page's ids (no set per page in a scan without repeats).
      const candidates = seenOverflow ? ids : seenBefore;
      const before = candidates ? new Set(prev.ids) : undefined;
      const dup = candidates && before ? candidates.filter((id) => before.has(id)) : [];
      repeated = ids.length > 0 && dup.length === ids.length;
      if (dup.length > 0) {
        events.push({
          kind: 'overlap',
          page: pageNo,
          detail: `${dup.length} row(s) of page ${prev.page} appeared again on page ${pageNo}: rows were inserted ahead of the scan position`,
          ids: dup.slice(0, 50),
        });
      } else if (opts.order && prev.ids.length > 0 && prev.total !== undefined && p.total !== undefined && p.total < prev.total) {
        const a = prev.ids[prev.ids.length - 1]!;
        const b = ids[0];
        const window = b === undefined ? `after id ${a}` : `between ids ${a} and ${b}`;
        events.push({
          kind: 'gap',
          page: pageNo,
          detail: `${prev.total - p.total} row(s) were removed before page ${pageNo} was read: rows ${window} may have moved onto page ${prev.page} and been skipped; re-read that range`,
          ids: b === undefined ? [a] : [a, b],
          afterId: a,
          beforeId: b,
          previousTotal: prev.total,
          total: p.total,
        });
      } else if (opts.order && prev.ids.length > 0 && ids.length > 0) {
        const a = prev.ids[prev.ids.length - 1]!;
        const b = ids[0]!;
        const bad = opts.order === 'asc' ? b < a : b > a;
        if (bad) {
          events.push({
            kind: 'order_violation',
            page: pageNo,
            detail: `page ${pageNo} starts at id ${b} after page ${prev.page} ended at id ${a} (${opts.order} order expected)`,
            ids: [a, b],
          });
        }
      }
    }
    prev = { page: pageNo, total: p.total, ids };
    if (p.total !== undefined) lastTotal = p.total;
    for (const e of events) opts.onDrift?.(e);
    return events.length ? { ...p, drift: [...(p.drift ?? []), ...events] } : p;
  }

  function finalCheck(last: P, pageNo: number): P | undefined {
    if (lastTotal === undefined || rowsWithoutId > 0 || seenOverflow || seen.size === lastTotal) return undefined;
    const e: DriftEvent = {
      kind: 'count_mismatch',
      page: pageNo,
      detail: `read ${seen.size} distinct rows but the listing reports ${lastTotal}: rows shifted across page boundaries during the scan; re-read or reconcile`,
      total: lastTotal,
    };
    opts.onDrift?.(e);
    return { ...last, drift: [...(last.drift ?? []), e] };
  }

  // Pages are requested ahead of the consumer (at most `concurrency` in flight, at most four times
  // that ahead, so one slow page does not stall the others) and yielded in order. With concurrency > 1 the first `concurrency` pages are requested
  // at once, before page 1 tells how many there are: one round trip saved, a few empty pages at worst.
  const pagesLimit = Math.min(start + maxPages - 1, opts.endPage ?? Number.POSITIVE_INFINITY);
  const signal = opts.signal;
  const ahead = new Map<number, Promise<P>>();
  /** Every request not settled yet, awaited or not: the scan ends only once they have settled. */
  const running = new Set<Promise<unknown>>();
  const track = <R>(pr: Promise<R>): Promise<R> => {
    running.add(pr);
    void pr.then(
      () => running.delete(pr),
      () => running.delete(pr),
    );
    return pr;
  };
  let inFlight = 0;
  let stopped = false;
  /** Re-reads page `pageNo - 1`; rows on it not seen yet slid back while `pageNo` was read. */
  async function recover(p: P, pageNo: number): Promise<P> {
    const again = await orAborted(track(fetchPage(pageNo - 1, perPage)), signal);
    const recovered = again.items.filter((item) => {
      const id = idOf(item);
      return id !== undefined && !seen.has(id);
    });
    if (recovered.length === 0) return p;
    const ids = recovered.map((item) => idOf(item)!);
    for (const id of ids) if (seen.size < MAX_TRACKED_IDS) seen.add(id);
    const e: DriftEvent = {
      kind: 'recovered',
      page: pageNo,
      detail: `${ids.length} row(s) slid back onto page ${pageNo - 1} while page ${pageNo} was read; they were re-read and added to page ${pageNo}`,
      ids: ids.slice(0, 50),
    };
    opts.onDrift?.(e);
    // A raw page carries its rows as the body sent them: the re-read body goes along with it.
    const alsoRead = isRaw(again) ? { alsoRead: [...((p as Partial<RawPage>).alsoRead ?? []), again.body] } : {};
    return { ...p, items: [...p.items, ...recovered], drift: [...(p.drift ?? []), e], ...alsoRead };
  }

  let page = start;
  let highest = start - 1;
  // Pages requested past the one the consumer waits on; none when the caller may stop at any page.
  const aheadLimit = opts.stopAfter ? 0 : 4 * concurrency;
  let limitPage = start + concurrency - 1;
  const launch = (n: number): Promise<P> => {
    inFlight++;
    highest = Math.max(highest, n);
    const pr = track(fetchPage(n, perPage)).then(
      (p) => {
        inFlight--;
        pump();
        return p;
      },
      (err: unknown) => {
        // The scan fails at this page once the consumer reaches it: ask for no more meanwhile.
        inFlight--;
        stopped = true;
        throw err;
      },
    );
    pr.catch(() => undefined); // awaited in order below; no unhandled rejection if the consumer stops early
    ahead.set(n, pr);
    return pr;
  };
  const pump = (): void => {
    while (!stopped && !signal?.aborted && inFlight < concurrency && highest < Math.min(limitPage, pagesLimit, page + aheadLimit)) {
      // Read ahead: awaited in order below; the catch only keeps a consumer that stops early from
      // leaving an unhandled rejection.
      launch(highest + 1).catch(() => undefined);
    }
  };

  let knownLast: number | undefined;
  try {
    pump();
    for (;;) {
      const pending = ahead.get(page) ?? launch(page);
      ahead.delete(page);
      const current = await orAborted(pending, signal);
      let checked = check(current, page);
      // Also after an empty last page: that is when every row it held slid back onto the page before.
      if (opts.verifyBoundaries && page > start) checked = await recover(checked, page);
      rowsRead += current.items.length;
      // A server may serve fewer rows than asked (a per_page cap): a page is short against what it served.
      const served = current.perPage > 0 ? Math.min(perPage, current.perPage) : perPage;
      const isShort = current.items.length < served;
      if (current.lastPage !== undefined && (knownLast === undefined || current.lastPage > knownLast)) knownLast = current.lastPage;
      // Fewer rows read than the listing reports: a `last_page` computed from the asked per_page
      // (not the served one) ends too early, so read on until an empty page. Only on a still
      // listing: when rows moved, drift events already say what may be missed.
      const distinctRead = (seenOverflow ? rowsRead : seen.size + rowsWithoutId) + (start - 1) * served;
      const behindTotal = lastTotal !== undefined && !totalMoved && distinctRead < lastTotal;
      const listingGoesOn =
        current.items.length > 0 &&
        // A server that ignores `page` returns the same rows again: stop instead of looping forever.
        !(repeated && current.lastPage === undefined) &&
        (knownLast !== undefined ? page < knownLast || (!isShort && current.lastPage === undefined) || behindTotal : behindTotal || (lastTotal === undefined && !isShort));
      const callerStops = listingGoesOn && (opts.stopAfter?.(current) ?? false);
      if (!(listingGoesOn && page < pagesLimit) || callerStops) {
        stopped = true;
        // Only a scan of the whole listing can compare what it read with the listing's total.
        const whole = start === 1 && !callerStops && !(listingGoesOn && opts.endPage !== undefined && page >= opts.endPage);
        yield (whole ? finalCheck(checked, page) : undefined) ?? checked;
        return;
      }
      // Unknown length: only the next page is certain to be wanted.
      limitPage = knownLast !== undefined && current.lastPage !== undefined ? knownLast : page + 1;
      pump();
      yield checked;
      page++;
    }
  } finally {
    stopped = true;
    // A consumer that stops early (break, an error, an abort) gets control back only once no request
    // of the scan is left running: nothing of a cancelled activity attempt goes on after it ends.
    await Promise.allSettled([...running]);
  }
}

function isRaw(p: Page<unknown>): p is RawPage {
  return typeof (p as Partial<RawPage>).body === 'string';
}
