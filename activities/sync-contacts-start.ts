import { sweepsNow } from '../workflows/sweeps-now.js';
import type { ReconcilePolicy } from '../workflows/sync-types.js';
import { beginContactsScan, createContactActivities, type ContactsPlan, type ScanPlan } from './sync-contacts.js';
import type { SyncActivityDeps } from './sync-deps.js';
import { createFreshContactActivities, type FreshContactsResult } from './sync-fresh-contacts.js';
import { createNewContactActivities, type NewContactsResult } from './sync-new-contacts.js';

export interface ContactsStartInput {
  full: boolean;
  reconcile: ReconcilePolicy;
  reconcileEveryMs: number;
  perPage: number;
  loadId: string;
  overlapMs: number;
  sweepRuns: number;
  /**
   * Also start (or resume) the scan when the plan is a backfill or a sweep, as startContactsScan
   * does: one activity and one workflow task less before a scan's first range. Workflows started
   * before this field existed call startContactsScan themselves.
   */
  startScan?: boolean;
}

/**
 * `fresh` only when the plan is incremental; `refreshed` only when that run does not sweep now;
 * `scan` only when asked for and the plan is a backfill or a sweep.
 */
export interface ContactsStartResult {
  plan: ContactsPlan;
  fresh?: NewContactsResult;
  refreshed?: FreshContactsResult;
  scan?: ScanPlan;
}

export function createContactsStartActivities(deps: SyncActivityDeps) {
  const { planContactsRun } = createContactActivities(deps);
  const { fetchNewContacts } = createNewContactActivities(deps);
  const { refreshContacts } = createFreshContactActivities(deps);
  return {
    /**
     * The start of a contacts run as one activity: the plan and, when it is incremental, the new
     * contacts and the freshness checks. As three activities, with a workflow task between each,
     * they were the longest chain of a sync with nothing to do. One after another, as before; a
     * retry redoes all three (each is idempotent; the retry's counts are what it found itself).
     * A backfill or a sweep starts its scan here when asked (`startScan`); a retry after the scan
     * was written resumes it. Its ranges go on in the workflow.
     */
    async startContactsRun(input: ContactsStartInput): Promise<ContactsStartResult> {
      const plan = await planContactsRun({ full: input.full, reconcile: input.reconcile, reconcileEveryMs: input.reconcileEveryMs });
      if (plan.mode !== 'incremental') {
        if (!input.startScan) return { plan };
        const scanInput = { mode: plan.mode === 'backfill' ? ('backfill' as const) : ('reconcile' as const), perPage: input.perPage, loadId: input.loadId };
        // The plan just read the state: with no scan to resume there is none to look for.
        return { plan, scan: await beginContactsScan(deps, scanInput, !plan.resumeScan) };
      }
      const fresh = await fetchNewContacts({ perPage: input.perPage, loadId: input.loadId });
      if (sweepsNow(plan, fresh, input.reconcile)) return { plan, fresh };
      const refreshed = await refreshContacts({ perPage: input.perPage, loadId: input.loadId, overlapMs: input.overlapMs, reprobeAfterMs: input.reconcileEveryMs, sweepRuns: input.sweepRuns });
      return { plan, fresh, refreshed };
    },
  };
}
