import { randomUUID } from 'node:crypto';
import type { Contact, Page, RawPage } from '../src/crm/types.js';
import { readContactsState, writeContactsState, type ActiveScan } from '../src/sync/contacts-state.js';
import { chooseContactsMode } from '../src/sync/choose-contacts-mode.js';
import { createContactSink, type RawContents } from '../src/sync/contact-sink.js';
import { clearScans, scannedPages, scannedTotals } from '../src/warehouse/scan-tables.js';
import type { LoadStats } from '../src/warehouse/types.js';
import type { ContactsMode, ReconcilePolicy } from '../workflows/sync-types.js';
import { finishContactsScan, probeContacts, type FinishScanResult } from './finish-contacts-scan.js';
import { activityClient, currentActivity, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface ContactsPlan {
  mode: ContactsMode;
  /** A scan left by an earlier run is resumed rather than restarted. */
  resumeScan: boolean;
  maxId: number;
  reconcileDue: boolean;
}

export interface ScanPlan extends ActiveScan {
  donePages: number[];
  resumed: boolean;
  requests: number;
}

export interface PagesResult extends LoadStats {
  /** Pages and rows of the range in the scan's page log: all of it once the activity succeeds. */
  pages: number;
  rows: number;
  /** Of those, the pages this run loaded (a resumed scan loaded the others before). */
  pagesLoadedNow: number;
  requests: number;
  /** A page reported a different total than the scan began with, or came back short: rows may have shifted. */
  drift: boolean;
  /** Rows this run fetched that did not fit the contact schema: not loaded, each recorded in the rejects table (`loadContactPages`). */
  rejected: number;
}

export interface ScanStartInput {
  mode: 'backfill' | 'reconcile';
  perPage: number;
  loadId: string;
}

const NO_STATS: LoadStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
/** Loads waiting behind a range's fetches: enough to overlap fetch and load, small enough to bound memory. */
const MAX_PENDING_LOADS = 8;
/**
 * Requests a range asks to keep in flight while the CRM sets the pace (the sink keeps up). The
 * client's request slots (`CRM_MAX_CONCURRENCY`) cap the real number at once across every range,
 * so a range that waits for its last pages to be durable, or for its next turn in the workflow,
 * leaves its slots to the others, and the ranges still running at a scan's end take all the slots
 * as the others end. With two (four for the scan's last range only), the ranges of a scan's end
 * left slots idle (bench/results/notes.md, "fetches per range" and "the tail of a scan, again").
 */
const FETCHES_PER_RANGE = 4;
/**
 * Requests in flight for a range that starts while the writer sets the pace (fetchers wait for
 * room in the sink, or its loads run behind), or before the sink can tell (a scan's first
 * ranges): more would not load sooner, only hold more pages in memory when the sink frees room
 * and every waiting fetcher goes at once, which made the 1M backfill's peak at its start.
 */
const FETCHES_PER_RANGE_WRITER_BOUND = 2;

function addStats(into: LoadStats, add: LoadStats): void {
  into.inserted += add.inserted;
  into.updated += add.updated;
  into.unchanged += add.unchanged;
  into.deleted += add.deleted;
}

/** Contiguous runs of the pages from..to not in `done`: each is one scan of the paginator. */
function pageRuns(from: number, to: number, done: ReadonlySet<number>): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (let page = from; page <= to; page++) {
    if (done.has(page)) continue;
    const last = runs.at(-1);
    if (last && last[1] === page - 1) last[1] = page;
    else runs.push([page, page]);
  }
  return runs;
}

/** The id-ascending scan's query for one page, with custom values. */
const scanQuery = (page: number, perPage: number) => ({ page, perPage, order: 'asc' as const, orderBy: 'id' as const, customFields: true });

/** What the sink loads of a page: its parsed contacts, or its body (and bodies re-read with it) for DuckDB. */
function pageContents(p: Page<Contact> | RawPage): { items: Contact[]; raw?: RawContents } {
  if (!('body' in p)) return { items: p.items };
  const ids: number[] = [];
  for (const r of p.items) if (r.id !== undefined) ids.push(r.id);
  const spans = p.rowSpans ? { rowSpans: p.rowSpans } : {};
  return { items: [], raw: { bodies: p.alsoRead ? [p.body, ...p.alsoRead] : [p.body], ...spans, rows: p.items.length, ids } };
}

/**
 * startContactsScan; `noActiveScan`: the caller read the state just before (the run's plan,
 * and a contacts stream has one run at a time), so it is not read again. The probe's round
 * trip overlaps the clearing of the last scan's page log and the read of the highest id held.
 */
export async function beginContactsScan(deps: SyncActivityDeps, input: ScanStartInput, noActiveScan: boolean): Promise<ScanPlan> {
  const { writes } = deps;
  const now = deps.now ?? Date.now;
  if (!noActiveScan) {
    const existing = await writes.run(async (w) => {
      const state = await readContactsState(w);
      if (!state.activeScan) return undefined;
      return { ...state.activeScan, donePages: await scannedPages(w, state.activeScan.scanKey) };
    });
    if (existing) return { ...existing, resumed: true, requests: 0 };
  }
  // The page log of a finished scan is not needed once a new one starts; if the probe fails,
  // the retry clears it again.
  const [head, maxIdAtStart] = await Promise.all([
    probeContacts(activityClient(deps.client)),
    writes.run(async (w) => {
      await clearScans(w);
      return await w.maxContactId();
    }),
  ]);
  return await writes.run(async (w) => {
    const state = await readContactsState(w);
    const scan: ActiveScan = {
      scanKey: `${input.loadId}:${randomUUID().slice(0, 8)}`,
      mode: input.mode,
      perPage: input.perPage,
      total: head.total,
      lastPage: head.total <= 0 ? 0 : Math.ceil(head.total / input.perPage),
      maxIdAtStart,
      crmTotalAtStart: head.total,
      crmMaxIdAtStart: head.maxId,
      startedAtMs: now(),
    };
    await writeContactsState(w, { ...state, activeScan: scan });
    return { ...scan, donePages: [], resumed: false, requests: 1 };
  });
}

export function createContactActivities(deps: SyncActivityDeps) {
  const { writes, logger } = deps;
  const now = deps.now ?? Date.now;
  const rawPages = (deps.contactPages ?? 'raw') === 'raw';
  const sink = createContactSink(writes, {
    // Raw pages are held as their bodies (about 0.8 KB a row, not a parsed contact's 5 KB): room
    // for twice the rows while the writer keeps up costs a few MB.
    ...(rawPages ? { keepUpHeldRows: 20_000 } : {}),
    ...(deps.contactLingerMs !== undefined ? { lingerMs: deps.contactLingerMs } : {}),
    ...(deps.typeAside === false ? { typeAside: false } : {}),
    ...(deps.publishEveryMs === 0 ? { publishColdBucketsAfterMs: false as const } : {}),
    ...(deps.now ? { now: deps.now } : {}),
    onPublishError: (err) => logger.warn({ err }, "publishing finished lake buckets during the scan failed; the run's final publish will write them"),
  });

  return {
    /** Decides backfill, incremental or reconcile from the stored state; no CRM request. */
    async planContactsRun(input: { full: boolean; reconcile: ReconcilePolicy; reconcileEveryMs: number }): Promise<ContactsPlan> {
      const state = await writes.run(readContactsState);
      return chooseContactsMode(state, { ...input, nowMs: now() });
    },

    /** Starts (or resumes) a full ascending scan: one probe request gives the page count and the CRM's highest id. */
    async startContactsScan(input: ScanStartInput): Promise<ScanPlan> {
      return await beginContactsScan(deps, input, false);
    },

    /**
     * Fetches pages fromPage..toPage (id ascending) through the client's paginator, which keeps
     * `FETCHES_PER_RANGE` requests in flight (fewer where the writer sets the pace; the `last`
     * flag workflows sent before 2026-12-05 is ignored) and reports drift, and loads each page.
     * The heartbeat carries the cursor: every page up to `loadedThrough` is durable, so a retry
     * starts after it; pages loaded out of order after it are found in the page log (written in
     * the same write scope as the load) and skipped too. A retry after a crash refetches only the
     * pages in flight.
     */
    async syncContactPages(input: { scanKey: string; fromPage: number; toPage: number; perPage: number; expectedTotal: number; loadId: string }): Promise<PagesResult> {
      const info = currentActivity()?.info;
      const cursor = (info?.heartbeatDetails as { loadedThrough?: unknown } | undefined)?.loadedThrough;
      const startPage = typeof cursor === 'number' && Number.isInteger(cursor) ? Math.max(input.fromPage, cursor + 1) : input.fromPage;
      // The workflow hands out only pages its plan found not done, so a first attempt has none of
      // them in the page log, and starts fetching without a turn in the owner's queue (behind the
      // other ranges' loads, which is longest at a scan's end). A retry asks the page log. Were a
      // page loaded already (a reset workflow), its second load is idempotent.
      const firstAttempt = info !== undefined && info.attempt === 1 && cursor === undefined;
      const done = new Set(firstAttempt ? [] : await writes.run((w) => scannedPages(w, input.scanKey, startPage, input.toPage)));
      const result: PagesResult = { ...NO_STATS, pages: 0, rows: 0, pagesLoadedNow: 0, requests: 0, drift: false, rejected: 0 };
      // Highest page such that it and every page before it in the range are durable.
      let loadedThrough = startPage - 1;
      const durable = new Set<number>();
      const advance = (): void => {
        while (durable.has(loadedThrough + 1) || done.has(loadedThrough + 1)) loadedThrough++;
      };
      advance();
      const hb = startHeartbeats(() => ({ loadedThrough, pages: result.pagesLoadedNow }));
      const client = activityClient(deps.client);
      // Every range of this process shares one budget of rows held in memory.
      const fetchParsed = async (page: number, perPage: number): Promise<Page<Contact>> => {
        await sink.room();
        result.requests++;
        return await client.contacts.listPage(scanQuery(page, perPage));
      };
      const fetchRaw = async (page: number, perPage: number): Promise<RawPage> => {
        await sink.room();
        result.requests++;
        return await client.contacts.listPageRaw(scanQuery(page, perPage));
      };
      /** Every load started, for the end; and those not yet settled, to bound them. */
      const loads: Promise<void>[] = [];
      const unsettled = new Set<Promise<void>>();
      const load = async (page: number, contents: { items: Contact[]; raw?: RawContents }, reportedTotal: number | undefined, servedPerPage = 0): Promise<void> => {
        // Its own total says no page after it holds rows (at the page size the server served, which
        // a capping server lowers): its lake bucket need not wait for one.
        const served = servedPerPage > 0 ? Math.min(input.perPage, servedPerPage) : input.perPage;
        const endsListing = reportedTotal !== undefined && page * served >= reportedTotal;
        const loaded = sink.add({ scanKey: input.scanKey, page, ...contents, reportedTotal, endsListing, loadId: input.loadId, syncedAt: new Date(now()) }).then((stats) => {
          addStats(result, stats);
          result.rejected += stats.rejected;
          result.pagesLoadedNow++;
          durable.add(page);
          advance();
        });
        // Observed at once (a failed load must not be an unhandled rejection while the scan waits
        // on requests); still awaited below, where its error fails the range.
        const settled = (): boolean => unsettled.delete(loaded);
        loaded.then(settled, settled);
        loads.push(loaded);
        unsettled.add(loaded);
        // This range is about to wait on its own pages: they load now, without lingering.
        if (unsettled.size >= MAX_PENDING_LOADS) sink.flush();
        // The oldest first (a Set keeps insertion order).
        while (unsettled.size >= MAX_PENDING_LOADS) await unsettled.values().next().value;
      };
      try {
        for (const [from, to] of pageRuns(startPage, input.toPage, done)) {
          let page = from;
          const opts = {
            perPage: input.perPage,
            startPage: from,
            endPage: to,
            expectedTotal: input.expectedTotal,
            order: 'asc' as const,
            concurrency: sink.crmSetsPace ? FETCHES_PER_RANGE : FETCHES_PER_RANGE_WRITER_BOUND,
          };
          const pages: AsyncIterable<Page<Contact> | RawPage> = rawPages ? client.paginate(fetchRaw, opts) : client.paginate(fetchParsed, opts);
          for await (const p of pages) {
            hb.throwIfCancelled();
            if (p.drift?.length) result.drift = true;
            await load(page++, pageContents(p), p.total, p.perPage);
            hb.beat();
          }
          // The listing ended before the run did (rows were deleted during the scan): the pages past
          // its end hold nothing, and are logged so, as a read of them would have.
          if (page <= to) result.drift = true;
          for (; page <= to; page++) await load(page, { items: [] }, undefined);
        }
        // The range's last page is in: it loads now rather than after the sink's linger.
        sink.flush();
        await Promise.all(loads);
        hb.beat();
        // Counted from the page log, so pages an earlier (crashed) attempt loaded are included.
        const logged = await writes.run((w) => scannedTotals(w, input.scanKey, input.fromPage, input.toPage));
        return { ...result, ...logged };
      } finally {
        hb.stop();
        // Nothing of this attempt may go on after it ends: every load settles first (the paginator
        // has already waited for its requests).
        await Promise.allSettled(loads);
      }
    },

    /** Ends a scan (`finishContactsScan` in finish-contacts-scan.ts). */
    finishContactsScan(input: { scanKey: string; loadId: string; fetchNew?: { perPage: number } }): Promise<FinishScanResult> {
      return finishContactsScan(deps, sink, input);
    },
  };
}

export type ContactActivities = ReturnType<typeof createContactActivities>;
