// Pure, shared by the contacts flow and the activity that starts an incremental contacts run, so
// both decide the same way whether the run sweeps now.
import type { ReconcilePolicy } from './sync-types.js';

/**
 * An incremental contacts run sweeps now when the live count disagrees with the CRM's total
 * (deletes, or rows missed by drift), or a reconciliation is due and allowed.
 */
export function sweepsNow(plan: { reconcileDue: boolean }, fresh: { crmTotal: number; liveCount: number }, reconcile: ReconcilePolicy): boolean {
  return fresh.crmTotal !== fresh.liveCount || (plan.reconcileDue && reconcile !== 'never');
}
