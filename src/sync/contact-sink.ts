import type { Contact } from '../crm/types.js';
import { CONTACT_BUCKET_SIZE } from '../warehouse/contact-columns.js';
import type { TypedContactPages } from '../warehouse/typing-lane.js';
import type { LoadStats } from '../warehouse/types.js';
import type { ContactSinkOptions } from './contact-sink-options.js';
import { createLoadedPageSpans } from './loaded-page-spans.js';
import { allRaw, batchLength, idsOf, loadSinkBatch, publishBuckets, rawBodies, rowsOf } from './sink-batch.js';
import type { WarehouseSession, WriteJobs } from './warehouse-port.js';

export type { ContactSinkOptions } from './contact-sink-options.js';

export interface ScannedPage {
  scanKey: string;
  page: number;
  /** The page's contacts, parsed in JavaScript (empty for a raw page). */
  items: Contact[];
  /**
   * Or the page as the CRM sent it, for DuckDB to parse (`loadContactPages`): its body (and any
   * page re-read for rows that slid back), the row count and the ids a scan of the body read.
   */
  raw?: RawContents;
  reportedTotal: number | undefined;
  /** No later page of the listing holds rows: its total ends the listing on this page. */
  endsListing?: boolean;
  loadId: string;
  syncedAt: Date;
}

export interface RawContents {
  bodies: string[];
  /** Where each row lies in `bodies[0]` (`RawPage.rowSpans`), so the load takes rows without parsing that body. */
  rowSpans?: readonly number[];
  rows: number;
  ids: number[];
}

/** A load's figures; `rejected`: rows of raw pages that did not fit, kept in `_contact_rejects`. */
export interface SinkStats extends LoadStats {
  rejected: number;
}

export interface ContactSink {
  /**
   * Loads the page and records it in the scan's page log, in one write scope; resolves once both
   * are durable. Stats of a batch are credited to its first page (the others get zeros), so
   * totals summed over a run are exact.
   */
  add(page: ScannedPage): Promise<SinkStats>;
  /**
   * Resolves once the rows queued or loading are under the sink's budget: fetchers wait here
   * before the next request, so however many ranges run, the pages held in memory stay bounded.
   */
  room(): Promise<void>;
  /** Rows queued or loading now. */
  readonly heldRows: number;
  /**
   * Fetchers have asked for room for a second, none waiting for `keepUpMs` (loads running behind
   * count as a wait): the CRM sets the pace, not the writer.
   */
  readonly crmSetsPace: boolean;
  /** Loads every page added so far without lingering: a range's end never waits out `lingerMs`. */
  flush(): void;
  /**
   * Queues a publish of every lake bucket this sink loaded into and has not published, cold or
   * not, in jobs of a few buckets (so other writes interleave). For the end of a scan: the last
   * buckets go out while the scan's finish waits on the CRM, instead of after it in the run's
   * final publish. In two lanes (publish-lake.ts): the scan has nothing left to load. Does not
   * wait; a failed job leaves its buckets to the final publish.
   */
  publishTouched(): void;
}

/** How long fetchers must have asked for room, none waiting, before `crmSetsPace` says so. */
const PACE_EVIDENCE_MS = 1_000;
/**
 * Loads in a row that each left a full load's worth of pages waiting: the writer sets the pace,
 * counted as a fetcher's wait at room(). The ranges wait on their own loads first (a range holds
 * at most eight pages), so while their pages stay under the keep-up budget none waits at room(),
 * and a CPU-bound scan had looked like one the CRM paced. Where the CRM sets the pace, the loads
 * that catch up after a pause of the writer (a checkpoint, a publish) leave less than that
 * waiting (bench/results/notes.md, "a CPU-bound scan the sink took for a CRM-paced one").
 */
const WRITER_BEHIND_LOADS = 4;
/** Buckets per background publish job, so a load never waits long behind one. */
const BUCKETS_PER_PUBLISH = 2;

const ZERO: SinkStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0, rejected: 0 };

interface Entry {
  page: ScannedPage;
  no: number;
  at: number;
  resolve: (s: SinkStats) => void;
  reject: (e: unknown) => void;
}

/**
 * Pages from every running range activity of this process go through one sink: pages that
 * arrive while a load runs are merged into the next single `loadContacts` call, because the
 * warehouse's merge costs far less per row in large batches than per page.
 */
export function createContactSink(writes: WriteJobs, options: ContactSinkOptions = {}): ContactSink {
  const maxRows = options.maxRowsPerLoad ?? 5_000;
  const coldMs = options.publishColdBucketsAfterMs ?? 2_000;
  const now = options.now ?? Date.now;
  const plainHeld = Math.max(options.maxHeldRows ?? 10_000, 1);
  const keepUpHeld = Math.max(options.keepUpHeldRows ?? plainHeld, plainHeld);
  const keepUpMs = options.keepUpMs ?? 5_000;
  /** When a fetcher last had to wait at room(), last asked, and began a run of asking (no gap of keepUpMs). */
  let [lastWaitAt, lastAskAt, askingSince] = [-Infinity, -Infinity, -Infinity];
  // The keep-up budget needs a second of asking too: a CPU-bound scan's first pages filled it
  // before any fetcher had waited, and that set the 1M backfill's peak (bench/results/notes.md,
  // "the sink's keep-up budget at the scan's start").
  const heldLimit = (): number => {
    const t = now();
    return keepUpHeld > plainHeld && t - lastWaitAt >= keepUpMs && t - askingSince >= PACE_EVIDENCE_MS ? keepUpHeld : plainHeld;
  };
  const publishEvery = Math.max(options.publishEveryLoads ?? 8, 1);
  const minRows = Math.min(Math.max(options.minRowsPerLoad ?? Math.ceil(maxRows / 2), 1), maxRows);
  const lingerMs = Math.max(options.lingerMs ?? 200, 0);
  /** The linger timer while pages wait for more to join their load. */
  let lingering: ReturnType<typeof setTimeout> | undefined;
  /** Pages added so far (numbered from 1), and the number of the last one `flush()` covers. */
  let [added, flushedThrough] = [0, 0];
  let loadsSincePublish = 0;
  /** Loads in a row that left a full load's worth of pages waiting (WRITER_BEHIND_LOADS). */
  let behindLoads = 0;
  /** A fetcher waited at room() (or loads ran behind) since the last publish: the warehouse is the bottleneck. */
  let fetchersWaited = false;
  /** Lake buckets this sink loaded into and has not published since: bucket -> last load time. */
  const touched = new Map<number, number>();
  /** The scan's loaded pages: which touched buckets are whole, so go out without waiting to turn cold. */
  const spans = createLoadedPageSpans(CONTACT_BUCKET_SIZE);
  /** Publish chains queued and not yet settled (cold ones wait until none is). */
  let publishing = 0;
  const pending: Entry[] = [];
  /**
   * The next batch, taken from `pending` while a load runs and typed meanwhile on the warehouse's
   * typing lane (`typeContactPagesAside`), so the writer's connection need not type it: typing is
   * the largest part of a load, and it reads only the pages (bench/results/notes.md, "typing
   * aside"). Its rows stay held until its own load ends.
   */
  let ahead: { batch: Entry[]; rows: number; typed: Promise<TypedContactPages | undefined>; on: WarehouseSession } | undefined;
  /** The write scope of the load running now, if any: where the next batch is typed aside. */
  let writer: WarehouseSession | undefined;
  const typeAhead = options.typeAside ?? true;
  let [pendingRows, scheduled, held] = [0, false, 0];
  let waiters: (() => void)[] = [];

  /** A fetcher waited for the writer at `t` (at room(), or as loads that ran behind). */
  function writerSetsPace(t: number): void {
    fetchersWaited = true;
    lastWaitAt = t;
  }

  function release(rows: number): void {
    held -= rows;
    if (waiters.length > 0 && held < heldLimit()) {
      const ready = waiters;
      waiters = [];
      for (const w of ready) w();
    }
  }

  /**
   * Whether the waiting pages should wait for more: too few rows, nobody flushed them, no fetcher
   * held at room(), and the first has waited less than `lingerMs` (then the timer is set for it).
   */
  function linger(): boolean {
    const first = pending[0];
    if (ahead || !first || lingerMs === 0 || pendingRows >= minRows || first.no <= flushedThrough || waiters.length > 0) return false;
    const left = first.at + lingerMs - performance.now();
    if (left <= 0) return false;
    lingering ??= setTimeout(() => {
      lingering = undefined;
      schedule();
    }, Math.ceil(left));
    return true;
  }

  /** The next load's pages, taken from `pending`. */
  function take(n = batchLength(pending, maxRows)): { batch: Entry[]; rows: number } {
    const batch = pending.splice(0, n);
    const rows = batch.reduce((sum, e) => sum + rowsOf(e.page), 0);
    pendingRows -= rows;
    return { batch, rows };
  }

  /**
   * While a load runs and a full batch of raw pages waits: takes it and types it aside. A typing
   * that fails leaves the pages to be typed in their load, which then raises what the pages cause.
   */
  function typeNextAside(): void {
    if (!typeAhead || ahead || !writer || pendingRows < maxRows) return;
    const n = batchLength(pending, maxRows);
    if (!allRaw(pending.slice(0, n).map((e) => e.page))) return;
    const next = take(n);
    const on = writer;
    ahead = { ...next, on, typed: on.typeContactPagesAside(rawBodies(next.batch.map((e) => e.page))).catch(() => undefined) };
  }

  function schedule(): void {
    if (scheduled || (pending.length === 0 && !ahead) || linger()) return;
    if (lingering) clearTimeout(lingering);
    lingering = undefined;
    scheduled = true;
    // The batch is taken when the write scope opens, so everything queued meanwhile joins it
    // (unless it was taken ahead, to be typed aside while the load before ran).
    writes
      .run(async (w) => {
        const { batch, rows, typed } = ahead ?? { ...take(), typed: undefined };
        ahead = undefined;
        behindLoads = pendingRows >= maxRows ? behindLoads + 1 : 0;
        if (behindLoads >= WRITER_BEHIND_LOADS) writerSetsPace(now());
        writer = w;
        typeNextAside();
        try {
          const pages = batch.map((b) => b.page);
          const stats = await loadSinkBatch(w, pages, typed);
          const pageIds = batch.map(({ page }) => idsOf(page));
          loadsSincePublish += 1;
          if (coldMs !== false) {
            const at = now();
            for (const ids of pageIds) for (const id of ids) touched.set(Math.floor(id / CONTACT_BUCKET_SIZE), at);
            for (const [i, { page }] of batch.entries()) spans.loaded(page.scanKey, page.page, pageIds[i]!, page.endsListing);
          }
          batch.forEach((b, i) => b.resolve(i === 0 ? stats : ZERO));
        } catch (err) {
          for (const b of batch) b.reject(err);
        } finally {
          writer = undefined;
          release(rows);
        }
      })
      .catch((err: unknown) => {
        // The scope itself failed to open: fail whatever is still waiting, callers retry.
        pendingRows = 0;
        for (const b of pending.splice(0)) {
          release(rowsOf(b.page));
          b.reject(err);
        }
        const dropped = ahead;
        ahead = undefined;
        if (dropped) {
          release(dropped.rows);
          for (const b of dropped.batch) b.reject(err);
          void dropped.typed.then((t) => t && dropped.on.dropTypedContactPages(t)).catch(() => undefined);
        }
      })
      .finally(() => {
        scheduled = false;
        schedule();
        publishCold();
      });
  }

  /**
   * Queues a publish of up to BUCKETS_PER_PUBLISH cold buckets, or buckets whose pages are all
   * loaded (loaded-page-spans.ts), when no page waits for a load, or every `publishEvery` loads
   * once a fetcher has had to wait for room since the last publish.
   */
  function publishCold(): void {
    if (coldMs === false || publishing > 0 || touched.size === 0) return;
    // Pages lingering for company do not count as waiting: the writer is idle meanwhile.
    if ((scheduled || (pending.length > 0 && lingering === undefined)) && (!fetchersWaited || loadsSincePublish < publishEvery)) return;
    const before = now() - coldMs;
    // The lowest bucket a load touched lately: a range is still in it, and may go on upwards.
    let lowestHot = Infinity;
    for (const [b, at] of touched) if (at > before && b < lowestHot) lowestHot = b;
    // So is the bucket of a page still waiting for its load (lingering): its range is there now.
    for (const { page } of [...pending, ...(ahead?.batch ?? [])]) {
      const first = page.items[0]?.id ?? page.raw?.ids[0];
      if (first !== undefined) lowestHot = Math.min(lowestHot, Math.floor(first / CONTACT_BUCKET_SIZE));
    }
    const cold = [...touched]
      .filter(([b, at]) => (at <= before && b < lowestHot) || spans.whole(b))
      .map(([b]) => b)
      .sort((a, b) => a - b)
      .slice(0, BUCKETS_PER_PUBLISH);
    if (cold.length === 0) return;
    loadsSincePublish = 0;
    fetchersWaited = false;
    // The scan's last pages loaded: nothing else wants the cores, so the publish takes two lanes.
    publish([cold], spans.allLoaded() && pending.length === 0 ? 2 : 1);
  }

  /** Publishes the groups of buckets one job after another; counted in `publishing` until the last settles. */
  function publish(groups: number[][], lanes: 1 | 2): void {
    if (groups.length === 0) return;
    for (const g of groups) for (const b of g) touched.delete(b);
    publishing++;
    const job = (buckets: number[]): Promise<void> => publishBuckets(writes, buckets, lanes).catch((err: unknown) => options.onPublishError?.(err));
    // The first job is queued now, the next ones as each finishes: other writes queue in between.
    let chain = job(groups[0]!);
    for (const buckets of groups.slice(1)) chain = chain.then(() => job(buckets));
    // Each job already routes its error to onPublishError, so the chain settles without one.
    chain
      .finally(() => {
        publishing--;
      })
      .catch((err: unknown) => options.onPublishError?.(err));
  }

  return {
    add(page) {
      return new Promise<SinkStats>((resolve, reject) => {
        held += rowsOf(page);
        pendingRows += rowsOf(page);
        pending.push({ page, no: ++added, at: performance.now(), resolve, reject });
        typeNextAside();
        schedule();
        // The writer idle and pages lingering: a cold bucket can go out meanwhile.
        if (lingering) publishCold();
      });
    },
    room() {
      const t = now();
      if (t - lastAskAt > keepUpMs) askingSince = t;
      lastAskAt = t;
      if (held < heldLimit()) return Promise.resolve();
      writerSetsPace(t);
      const waited = new Promise<void>((resolve) => waiters.push(resolve));
      // A fetcher held back: what waits loads now, whatever its size.
      schedule();
      return waited;
    },
    get heldRows() {
      return held;
    },
    get crmSetsPace() {
      const t = now();
      return t - lastAskAt <= keepUpMs && t - lastWaitAt >= keepUpMs && t - askingSince >= PACE_EVIDENCE_MS;
    },
    flush() {
      flushedThrough = added;
      schedule();
    },
    publishTouched() {
      if (coldMs === false || touched.size === 0) return;
      const all = [...touched.keys()].sort((a, b) => a - b);
      const groups: number[][] = [];
      for (let i = 0; i < all.length; i += BUCKETS_PER_PUBLISH) groups.push(all.slice(i, i + BUCKETS_PER_PUBLISH));
      publish(groups, 2);
    },
  };
}
