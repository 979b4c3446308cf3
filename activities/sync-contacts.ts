import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { Contact, Page, RawPage } from '../src/crm/types.js';
import type { SyncCrmClient } from '../src/sync/crm-port.js';
import { CrmsyncError } from '../src/errors.js';
import { readContactsState, writeContactsState, type ActiveScan } from '../src/sync/contacts-state.js';
import { chooseContactsMode } from '../src/sync/choose-contacts-mode.js';
import { createContactSink, type RawContents } from '../src/sync/contact-sink.js';
import { CONTACT_WITH_CUSTOM_VALUES } from '../src/sync/contact-requests.js';
import { clearScans, liveContactCount, scannedPages, scannedTotals, unseenLiveContactIds } from '../src/warehouse/scan-tables.js';
import { scanOutcome } from '../src/warehouse/scan-outcome.js';
import type { LoadStats } from '../src/warehouse/types.js';
import type { ContactsMode, ReconcilePolicy } from '../workflows/sync-types.js';
import { fetchNewContactsWith, fetchNewestContactPage, type NewContactsResult } from './sync-new-contacts.js';
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

export interface FinishScanResult {
  deleted: number;
  restored: number;
  requests: number;
  drift: boolean;
  crmTotal: number;
  liveCount: number;
  /** Contacts created while the scan ran, when the finish was asked to fetch them (`fetchNew`). */
  fresh?: NewContactsResult;
}

const NO_STATS: LoadStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
/** Loads waiting behind a range's fetches: enough to overlap fetch and load, small enough to bound memory. */
const MAX_PENDING_LOADS = 8;
/**
 * Requests a range keeps in flight. Two, so that while one range waits for its last pages to be
 * durable the other ranges keep every request slot of the client busy (the client's limiter caps
 * the real number of requests at once): with one, each range's tail left a slot idle, and a
 * backfill with real latency took longer against the raw fetch floor (bench/results/notes.md,
 * "fetches per range").
 */
const FETCHES_PER_RANGE = 2;
/**
 * Requests the scan's last range keeps in flight: no range follows it, so as the others end it
 * takes the request slots they leave; with two, a 100k backfill with real latency ended on one
 * range alone with half the slots idle for its last 0.3 s (bench/results/notes.md, "the last
 * range").
 */
const LAST_RANGE_FETCHES = 2 * FETCHES_PER_RANGE;

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

function isNotFound(err: unknown): boolean {
  return err instanceof CrmsyncError && err.code === 'CRM_NOT_FOUND';
}

export function createContactActivities(deps: SyncActivityDeps) {
  const { writes, logger } = deps;
  const now = deps.now ?? Date.now;
  const ctxFor = (loadId: string) => ({ loadId, syncedAt: new Date(now()) });
  const rawPages = (deps.contactPages ?? 'raw') === 'raw';
  const sink = createContactSink(writes, {
    // Raw pages are held as their bodies (about 0.8 KB a row, not a parsed contact's 5 KB): room
    // for twice the rows while the writer keeps up costs a few MB.
    ...(rawPages ? { keepUpHeldRows: 20_000 } : {}),
    ...(deps.contactLingerMs !== undefined ? { lingerMs: deps.contactLingerMs } : {}),
    ...(deps.publishEveryMs === 0 ? { publishColdBucketsAfterMs: false as const } : {}),
    onPublishError: (err) => logger.warn({ err }, "publishing finished lake buckets during the scan failed; the run's final publish will write them"),
  });

  async function probe(client: SyncCrmClient): Promise<{ total: number; maxId: number }> {
    const p = await client.contacts.listPage({ page: 1, perPage: 1, order: 'desc', orderBy: 'id' });
    return { total: p.total ?? p.items.length, maxId: p.items[0]?.id ?? 0 };
  }

  return {
    /** Decides backfill, incremental or reconcile from the stored state; no CRM request. */
    async planContactsRun(input: { full: boolean; reconcile: ReconcilePolicy; reconcileEveryMs: number }): Promise<ContactsPlan> {
      const state = await writes.run(readContactsState);
      return chooseContactsMode(state, { ...input, nowMs: now() });
    },

    /** Starts (or resumes) a full ascending scan: one probe request gives the page count and the CRM's highest id. */
    async startContactsScan(input: { mode: 'backfill' | 'reconcile'; perPage: number; loadId: string }): Promise<ScanPlan> {
      const existing = await writes.run(async (w) => {
        const state = await readContactsState(w);
        if (!state.activeScan) return undefined;
        return { ...state.activeScan, donePages: await scannedPages(w, state.activeScan.scanKey) };
      });
      if (existing) return { ...existing, resumed: true, requests: 0 };

      const head = await probe(activityClient(deps.client));
      return await writes.run(async (w) => {
        const state = await readContactsState(w);
        const scan: ActiveScan = {
          scanKey: `${input.loadId}:${randomUUID().slice(0, 8)}`,
          mode: input.mode,
          perPage: input.perPage,
          total: head.total,
          lastPage: head.total <= 0 ? 0 : Math.ceil(head.total / input.perPage),
          maxIdAtStart: await w.maxContactId(),
          crmTotalAtStart: head.total,
          crmMaxIdAtStart: head.maxId,
          startedAtMs: now(),
        };
        await clearScans(w);
        await writeContactsState(w, { ...state, activeScan: scan });
        return { ...scan, donePages: [], resumed: false, requests: 1 };
      });
    },

    /**
     * Fetches pages fromPage..toPage (id ascending) through the client's paginator, which keeps
     * `FETCHES_PER_RANGE` requests in flight (`LAST_RANGE_FETCHES` for the scan's `last` range)
     * and reports drift, and loads each page. The heartbeat
     * carries the cursor: every page up to `loadedThrough` is durable, so a retry starts after
     * it; pages loaded out of order after it are found in the page log (written in the same write
     * scope as the load) and skipped too. A retry after a crash refetches only the pages in flight.
     */
    async syncContactPages(input: { scanKey: string; fromPage: number; toPage: number; perPage: number; expectedTotal: number; loadId: string; last?: boolean }): Promise<PagesResult> {
      const cursor = (currentActivity()?.info.heartbeatDetails as { loadedThrough?: unknown } | undefined)?.loadedThrough;
      const startPage = typeof cursor === 'number' && Number.isInteger(cursor) ? Math.max(input.fromPage, cursor + 1) : input.fromPage;
      const done = new Set(await writes.run((w) => scannedPages(w, input.scanKey, startPage, input.toPage)));
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
      const load = async (page: number, contents: { items: Contact[]; raw?: RawContents }, reportedTotal: number | undefined): Promise<void> => {
        const loaded = sink.add({ scanKey: input.scanKey, page, ...contents, reportedTotal, loadId: input.loadId, syncedAt: new Date(now()) }).then((stats) => {
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
            concurrency: input.last ? LAST_RANGE_FETCHES : FETCHES_PER_RANGE,
          };
          const pages: AsyncIterable<Page<Contact> | RawPage> = rawPages ? client.paginate(fetchRaw, opts) : client.paginate(fetchParsed, opts);
          for await (const p of pages) {
            hb.throwIfCancelled();
            if (p.drift?.length) result.drift = true;
            await load(page++, pageContents(p), p.total);
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

    /**
     * Ends a scan: live contacts it did not see (up to the highest id held when it began) are
     * confirmed one by one, since drift can hide a live contact from a scan; the gone ones are
     * tombstoned, the found ones loaded. Then one probe tells whether the CRM changed meanwhile.
     * With `fetchNew`, the contacts created while the scan ran are fetched too (as
     * `fetchNewContacts`, in `fresh`): the newest page is the probe, requested as soon as no
     * confirmation is left, so its round trip overlaps the publish of the scan's last lake buckets.
     */
    async finishContactsScan(input: { scanKey: string; loadId: string; fetchNew?: { perPage: number } }): Promise<FinishScanResult> {
      const client = activityClient(deps.client);
      let newest: Promise<Page<Contact> | RawPage> | undefined;
      const requestNewest = (perPage: number): Promise<Page<Contact> | RawPage> => {
        if (!newest) {
          newest = fetchNewestContactPage(deps, 1, perPage);
          // Awaited below; observed now so that a failure before then is not an unhandled rejection.
          newest.catch(() => undefined);
        }
        return newest;
      };
      const head = async (): Promise<{ total: number; maxId: number }> => {
        if (!input.fetchNew) return await probe(client);
        const p = await requestNewest(input.fetchNew.perPage);
        return { total: p.total ?? p.items.length, maxId: p.items[0]?.id ?? 0 };
      };
      const withFresh = async (finished: FinishScanResult): Promise<FinishScanResult> =>
        input.fetchNew ? { ...finished, fresh: await fetchNewContactsWith(deps, { perPage: input.fetchNew.perPage, loadId: input.loadId }, newest) } : finished;
      const found0 = await writes.run(async (w) => {
        const active = (await readContactsState(w)).activeScan;
        if (!active || active.scanKey !== input.scanKey) return undefined;
        return { scan: active, candidates: await unseenLiveContactIds(w, active.scanKey, active.maxIdAtStart) };
      });
      if (!found0) {
        // Finished already: an earlier attempt completed but its result was lost (worker died).
        const tail = await head();
        const liveCount = await writes.run(liveContactCount);
        logger.info({ scanKey: input.scanKey }, 'contact scan already finished; nothing to do');
        return await withFresh({ deleted: 0, restored: 0, requests: 1, drift: false, crmTotal: tail.total, liveCount });
      }
      const { scan, candidates } = found0;
      // With nothing to confirm (the usual end), the probe goes out now; after the confirmations
      // otherwise, so that it still sees what changed while they ran.
      if (input.fetchNew && candidates.length === 0) requestNewest(input.fetchNew.perPage).catch(() => undefined);
      // The scan's pages are all loaded: its last lake buckets go out while this waits on the CRM.
      sink.publishTouched();
      let requests = 0;
      const gone: number[] = [];
      const found: Contact[] = [];
      const limit = pLimit(deps.confirmConcurrency ?? 4);
      const hb = startHeartbeats(() => ({ confirming: candidates.length, done: gone.length + found.length }));
      try {
        await Promise.all(
          candidates.map((id) =>
            limit(async () => {
              hb.throwIfCancelled();
              requests++;
              try {
                const c = await client.contacts.get(id, CONTACT_WITH_CUSTOM_VALUES);
                if (c) found.push(c);
                else gone.push(id);
              } catch (err) {
                if (isNotFound(err)) gone.push(id);
                else throw err;
              }
            }),
          ),
        );
      } finally {
        hb.stop();
      }
      const tail = await head();
      requests++;
      const ctx = ctxFor(input.loadId);
      const finished = await writes.run(async (w) => {
        const deleted = gone.length > 0 ? await w.tombstoneContacts(gone, ctx) : 0;
        if (found.length > 0) await w.loadContacts(found, ctx);
        const outcome = await scanOutcome(w, scan.scanKey, scan.total);
        const drift = tail.total !== scan.crmTotalAtStart || tail.maxId !== scan.crmMaxIdAtStart || outcome.pagesOffTotal > 0 || found.length > 0;
        const state = await readContactsState(w);
        await writeContactsState(w, {
          ...state,
          backfillDone: true,
          maxId: Math.max(state.maxId, outcome.maxSeenId),
          lastReconcileAtMs: scan.startedAtMs,
          needsReconcile: drift,
          activeScan: null,
          lastRunAtMs: now(),
        });
        await clearScans(w);
        const liveCount = await liveContactCount(w);
        if (drift) logger.info({ scanKey: scan.scanKey, restored: found.length, deleted }, 'contacts changed during the scan');
        return { deleted, restored: found.length, requests, drift, crmTotal: tail.total, liveCount };
      });
      return await withFresh(finished);
    },
  };
}

export type ContactActivities = ReturnType<typeof createContactActivities>;
