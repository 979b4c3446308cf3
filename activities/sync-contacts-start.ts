import { sweepsNow } from '../workflows/sweeps-now.js';
import type { ReconcilePolicy } from '../workflows/sync-types.js';
import { createContactActivities, type ContactsPlan } from './sync-contacts.js';
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
}

/** `fresh` only when the plan is incremental; `refreshed` only when that run does not sweep now. */
export interface ContactsStartResult {
  plan: ContactsPlan;
  fresh?: NewContactsResult;
  refreshed?: FreshContactsResult;
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
     * A backfill or a sweep goes on in the workflow.
     */
    async startContactsRun(input: ContactsStartInput): Promise<ContactsStartResult> {
      const plan = await planContactsRun({ full: input.full, reconcile: input.reconcile, reconcileEveryMs: input.reconcileEveryMs });
      if (plan.mode !== 'incremental') return { plan };
      const fresh = await fetchNewContacts({ perPage: input.perPage, loadId: input.loadId });
      if (sweepsNow(plan, fresh, input.reconcile)) return { plan, fresh };
      const refreshed = await refreshContacts({ perPage: input.perPage, loadId: input.loadId, overlapMs: input.overlapMs, reprobeAfterMs: input.reconcileEveryMs, sweepRuns: input.sweepRuns });
      return { plan, fresh, refreshed };
    },
  };
}
