import { continueAsNew, patched, workflowInfo } from '@temporalio/workflow';
import { allOrStopTheRest } from './all-or-stop-the-rest.js';
import { planPageRanges, rangeSizeFor } from './page-ranges.js';
import { syncActivities } from './sync-activity-proxies.js';
import { sweepsNow } from './sweeps-now.js';
import type { FreshContactsResult } from '../activities/sync-fresh-contacts.js';
import type { ScanPlan } from '../activities/sync-contacts.js';
import { addTotals, type ContactsMode, type FreshSummary, type StreamProgress, type StreamTotals, type StreamWorkflowInput } from './sync-types.js';

/**
 * A run sweeps once more when the CRM changed under its scan (one repair pass: a full re-read is
 * costly on large tables); if that changes again, the state asks the next run to sweep.
 */
const MAX_SCAN_PASSES = 2;

/**
 * Contacts: backfill or sweep by id-ascending page ranges in parallel, or incremental by newest
 * ids first. Returns the mode it ran in. May end the workflow with continueAsNew mid-scan: the
 * scan's page log lives in the warehouse, so the next run resumes it without refetching.
 */
export async function runContactsFlow(
  input: StreamWorkflowInput,
  totals: StreamTotals,
  progress: StreamProgress,
  onDrift: () => void,
  onFresh: (summary: FreshSummary) => void = () => undefined,
): Promise<ContactsMode> {
  const { tuning } = input;
  const acts = syncActivities(input.warehouseTaskQueue, tuning);
  const loadId = `${input.runId}:contacts`;
  let mode: ContactsMode;
  let passes = input.carry?.passes ?? 0;
  /** The scan startContactsRun started with the plan, for the first pass. */
  let started: ScanPlan | undefined;

  if (input.carry) {
    mode = input.carry.mode;
  } else {
    // The plan, the new contacts and the freshness checks in one activity (startContactsRun): two
    // round trips and two workflow tasks less on the longest chain of a sync with nothing to do.
    // Runs started before this change take them one activity at a time. A backfill or a sweep
    // starts its scan in it too (`startScan`); runs started before that start it below.
    const one = patched('contacts-start-one-activity')
      ? await acts.startContactsRun({
          full: input.full,
          reconcile: input.reconcile,
          reconcileEveryMs: input.reconcileEveryMs,
          perPage: tuning.perPage,
          loadId,
          overlapMs: tuning.updatedOverlapMs,
          sweepRuns: tuning.sweepRuns,
          ...(patched('contacts-run-starts-scan') ? { startScan: true } : {}),
        })
      : undefined;
    const plan = one ? one.plan : await acts.planContactsRun({ full: input.full, reconcile: input.reconcile, reconcileEveryMs: input.reconcileEveryMs });
    mode = plan.mode;
    started = one?.scan;
    if (mode === 'incremental') {
      progress.phase = 'incremental';
      const fresh = one?.fresh ?? (await acts.fetchNewContacts({ perPage: tuning.perPage, loadId }));
      addTotals(totals, fresh);
      progress.pagesDone += fresh.pages;
      progress.rows = totals.rows;
      progress.requests = totals.requests;
      // A live count that disagrees with the CRM's total means deletes (or rows missed by drift): sweep now.
      const sweepNow = one ? one.refreshed === undefined : sweepsNow(plan, fresh, input.reconcile);
      if (!sweepNow) {
        // Edits to existing contacts (the free CRM sends no webhooks); older histories ran without it.
        if (!one && !patched('fresh-contacts')) return 'incremental';
        const summary = await refreshExisting(input, totals, progress, loadId, one?.refreshed);
        onFresh(summary);
        // Member counts differ by more than a sweep costs: sweep now rather than re-read by tag.
        if (!summary.memberships.sweepInstead) return 'incremental';
      }
      mode = 'reconcile';
    }
  }

  for (;;) {
    progress.phase = mode === 'backfill' ? 'backfill' : 'reconcile';
    const scan = started ?? (await acts.startContactsScan({ mode: mode === 'backfill' ? 'backfill' : 'reconcile', perPage: tuning.perPage, loadId }));
    started = undefined;
    mode = scan.mode;
    totals.requests += scan.requests;
    progress.pagesTotal = scan.lastPage;
    progress.pagesDone = scan.donePages.length;
    const ranges = planPageRanges(scan.lastPage, scan.donePages, rangeSizeFor(scan.lastPage, tuning.parallelism, tuning.maxPagesPerRange));
    let stopForHistory = false;
    const slot = async (): Promise<void> => {
      for (let range = ranges.shift(); range; range = stopForHistory ? undefined : ranges.shift()) {
        const r = await acts.syncContactPages({ scanKey: scan.scanKey, ...range, perPage: scan.perPage, expectedTotal: scan.total, loadId });
        addTotals(totals, r);
        progress.pagesDone += range.toPage - range.fromPage + 1;
        progress.rows = totals.rows;
        progress.requests = totals.requests;
        if (r.drift) onDrift();
        const info = workflowInfo();
        if (info.continueAsNewSuggested || info.historyLength >= tuning.maxHistoryEvents) stopForHistory = true;
      }
    };
    await allOrStopTheRest(Array.from({ length: Math.max(1, tuning.parallelism) }, () => slot));
    if (ranges.length > 0) {
      // Every in-flight range has finished: nothing is lost, the next run resumes from the page log.
      await continueAsNew<(i: StreamWorkflowInput) => Promise<unknown>>({
        ...input,
        carry: { mode, scanKey: scan.scanKey, passes, startedAtMs: progress.startedAtMs, totals },
      });
    }

    progress.phase = 'finishing';
    // Contacts created while the scan ran sit above its pages: the finish picks them up too (its
    // probe is their first page), one round trip less; runs started before that change fetch
    // them in an activity of their own.
    const fetchNew = patched('finish-fetches-new') ? { fetchNew: { perPage: tuning.perPage } } : {};
    const fin = await acts.finishContactsScan({ scanKey: scan.scanKey, loadId, ...fetchNew });
    totals.requests += fin.requests;
    totals.deleted += fin.deleted;
    const fresh = fin.fresh ?? (await acts.fetchNewContacts({ perPage: tuning.perPage, loadId }));
    addTotals(totals, fresh);
    progress.rows = totals.rows;
    progress.requests = totals.requests;
    passes++;
    const changed = fin.drift || fresh.crmTotal !== fresh.liveCount;
    if (changed) onDrift();
    // The finish left needsReconcile set: the repair pass saw the CRM change again.
    if (changed && passes >= MAX_SCAN_PASSES) progress.reconcileNext = true;
    if (!changed || passes >= MAX_SCAN_PASSES) return mode;
    mode = 'reconcile';
  }
}

/**
 * Finds edits to existing contacts without `updated_since`: the updated-first scan (where the CRM
 * orders by updated_at), membership repair from the tag and list counts, and one slice of the
 * rolling sweep. Each loads what it finds; the summary says what each found.
 */
async function refreshExisting(input: StreamWorkflowInput, totals: StreamTotals, progress: StreamProgress, loadId: string, refreshed?: FreshContactsResult): Promise<FreshSummary> {
  const { tuning } = input;
  const acts = syncActivities(input.warehouseTaskQueue, tuning);
  const track = (r: Partial<StreamTotals>): void => {
    addTotals(totals, r);
    progress.pagesDone += r.pages ?? 0;
    progress.rows = totals.rows;
    progress.requests = totals.requests;
  };
  // One activity for the three checks (one round trip, not three); runs started before this
  // change replay them as three.
  const one =
    refreshed ??
    (patched('fresh-contacts-one-activity')
      ? await acts.refreshContacts({ perPage: tuning.perPage, loadId, overlapMs: tuning.updatedOverlapMs, reprobeAfterMs: input.reconcileEveryMs, sweepRuns: tuning.sweepRuns })
      : undefined);
  const up = one ? one.updated : await acts.scanUpdatedContacts({ perPage: tuning.perPage, loadId, overlapMs: tuning.updatedOverlapMs, reprobeAfterMs: input.reconcileEveryMs });
  track(up);
  const members = one ? one.members : await acts.repairMemberships({ perPage: tuning.perPage, loadId });
  track({ ...members, pages: 0 });
  const memberships = {
    checked: members.checked,
    differing: members.differing,
    rows: members.rows,
    updated: members.updated,
    deleted: members.deleted,
    requests: members.requests,
    sweepInstead: members.sweepInstead,
  };
  const updatedFirst = up.ran ? { updatedFirst: { rows: up.rows, updated: up.updated, requests: up.requests, orderBroken: up.orderBroken } } : {};
  // A sweep follows: the slice would re-read what it reads anyway.
  if (members.sweepInstead) return { ...updatedFirst, memberships };
  // refreshContacts returns a slice whenever no sweep follows; asking for one is only a fallback.
  const slice = one?.slice ?? (await acts.sweepContactSlice({ perPage: tuning.perPage, loadId, sweepRuns: tuning.sweepRuns }));
  track(slice);
  return {
    ...updatedFirst,
    memberships,
    slice: { fromId: slice.fromId, toId: slice.toId, rows: slice.rows, updated: slice.updated, requests: slice.requests, cycleDone: slice.cycleDone },
  };
}
