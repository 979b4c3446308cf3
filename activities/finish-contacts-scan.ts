import pLimit from 'p-limit';
import { headRowsAt } from '../src/crm/index.js';
import type { Contact, Page, RawPage } from '../src/crm/types.js';
import { CrmsyncError } from '../src/errors.js';
import type { ContactSink } from '../src/sync/contact-sink.js';
import { CONTACT_WITH_CUSTOM_VALUES } from '../src/sync/contact-requests.js';
import { readContactsState, writeContactsState } from '../src/sync/contacts-state.js';
import type { SyncCrmClient } from '../src/sync/crm-port.js';
import { scanOutcome } from '../src/warehouse/scan-outcome.js';
import { clearScans, liveContactCount, unseenLiveContactIds } from '../src/warehouse/scan-tables.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';
import { fetchNewContactsWith, fetchNewestContactPage, type NewContactsResult } from './sync-new-contacts.js';

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

/** What a newest-first page says of the CRM: its total and its highest id. */
const headOf = (p: Page<Contact | { id?: number }>): { total: number; maxId: number } => ({ total: p.total ?? p.items.length, maxId: p.items[0]?.id ?? 0 });

/** One row, newest first: the CRM's total and highest id. */
export async function probeContacts(client: SyncCrmClient): Promise<{ total: number; maxId: number }> {
  return headOf(await client.contacts.listPage({ page: 1, perPage: 1, order: 'desc', orderBy: 'id' }));
}

function isNotFound(err: unknown): boolean {
  return err instanceof CrmsyncError && err.code === 'CRM_NOT_FOUND';
}

/**
 * Ends a scan: live contacts it did not see (up to the highest id held when it began) are
 * confirmed one by one, since drift can hide a live contact from a scan; the gone ones are
 * tombstoned, the found ones loaded. Then one probe tells whether the CRM changed meanwhile.
 * With `fetchNew`, the contacts created while the scan ran are fetched too (as
 * `fetchNewContacts`, in `fresh`): the newest rows' head (`headRowsAt`) is the probe, requested
 * as the finish starts (and again after the confirmations, when there are any), so its round trip
 * overlaps the finish's first query and the publish of the scan's last lake buckets (from `sink`,
 * which loaded the scan's pages).
 */
export async function finishContactsScan(
  deps: SyncActivityDeps,
  sink: Pick<ContactSink, 'publishTouched'>,
  input: { scanKey: string; loadId: string; fetchNew?: { perPage: number } },
): Promise<FinishScanResult> {
  const { writes, logger } = deps;
  const now = deps.now ?? Date.now;
  const client = activityClient(deps.client);
  let newest: Promise<Page<Contact> | RawPage> | undefined;
  const requestNewest = (perPage: number): Promise<Page<Contact> | RawPage> => {
    if (!newest) {
      newest = fetchNewestContactPage(deps, 1, headRowsAt(perPage));
      // Awaited below; observed now so that a failure before then is not an unhandled rejection.
      newest.catch(() => undefined);
    }
    return newest;
  };
  const head = async (): Promise<{ total: number; maxId: number }> => {
    if (!input.fetchNew) return await probeContacts(client);
    return headOf(await requestNewest(input.fetchNew.perPage));
  };
  const withFresh = async (finished: FinishScanResult): Promise<FinishScanResult> =>
    input.fetchNew ? { ...finished, fresh: await fetchNewContactsWith(deps, { perPage: input.fetchNew.perPage, loadId: input.loadId }, newest) } : finished;
  // The newest rows' head goes out at once: with nothing to confirm (the usual end) it is the probe,
  // and its round trip overlaps the finish's first query and the publish of the scan's last lake
  // buckets. With contacts to confirm it is dropped and asked again after them, so that it still
  // sees what changed while they ran.
  if (input.fetchNew) requestNewest(input.fetchNew.perPage).catch(() => undefined);
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
  let requests = 0;
  if (newest && candidates.length > 0) {
    newest = undefined;
    requests++;
  }
  // The scan's pages are all loaded: its last lake buckets go out while this waits on the CRM.
  sink.publishTouched();
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
  const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
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
}
