import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { SyncActivities } from '../activities/sync-activities.js';
import type { SyncTuning } from './sync-types.js';

/**
 * Sync activities fetch and load, so they run on the warehouse task queue (one process, one
 * DuckDB writer). Retries are Temporal's: the client classifies errors and does not loop itself.
 * A cancelled run waits for its activities to stop (they settle their loads first), so nothing
 * writes to the warehouse after the run reports cancelled.
 */
export function syncActivities(taskQueue: string, tuning: SyncTuning) {
  return proxyActivities<SyncActivities>({
    taskQueue,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: tuning.heartbeatTimeoutMs,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '300 ms', backoffCoefficient: 2, maximumInterval: '20 s', maximumAttempts: 30 },
  });
}

/** Bookkeeping (run records, lake publish) retries less: it must not hold a failed run open for long. */
export function bookkeepingActivities(taskQueue: string) {
  return proxyActivities<SyncActivities>({
    taskQueue,
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '500 ms', maximumInterval: '10 s', maximumAttempts: 5 },
  });
}
