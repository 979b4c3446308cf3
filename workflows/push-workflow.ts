import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  TemporalFailure,
  continueAsNew,
  defineQuery,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { PushActivities, PushProgress, PushTotals, PushWorkflowInput, PushWorkflowResult } from './push-types.js';

/** Progress for the CLI and operators: counts and cursors only. */
export const pushProgressQuery = defineQuery<PushProgress>('pushProgress');

/**
 * Reverse sync: plan once (the source is read, checked and numbered in the warehouse), then push
 * the numbered rows in batches. Activities run on the warehouse queue because they write the
 * ledger: one DuckDB writer per process.
 */
export async function pushWorkflow(input: PushWorkflowInput): Promise<PushWorkflowResult> {
  const batchSize = Math.max(1, Math.min(input.batchSize ?? 2000, 10_000));
  // Continue as new every so many batches, so history stays small on huge pushes.
  const batchesPerRun = Math.max(1, input.batchesPerRun ?? 200);
  const maxMs = Math.max(1, Math.min(input.batchSeconds ?? 10, 600)) * 1000;
  const { planPush, pushBatch, finishPush } = proxyActivities<PushActivities>({
    taskQueue: `${workflowInfo().taskQueue}-warehouse`,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: input.heartbeatTimeoutMs ?? 30_000,
    // A cancelled push waits for its batch to stop (rows in flight finish and reach the ledger):
    // once the run reports cancelled, nothing more is sent to the CRM.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
  });

  let phase: PushProgress['phase'] = input.resume ? 'sending' : 'planning';
  let cursor = input.resume?.cursor ?? 0;
  const totals: PushTotals = input.resume?.totals ?? { sent: 0, succeeded: 0, failed: 0, skipped: 0 };
  let toSend = input.resume?.plan.toSend ?? 0;
  setHandler(pushProgressQuery, () => ({ phase, toSend, cursor, ...totals }));

  const plan = input.resume?.plan ?? (await planPush({ from: input.from, ledgerName: input.ledgerName, runId: pushRunId(), createMissing: input.createMissing ?? false }));
  toSend = plan.toSend;
  phase = 'sending';
  try {
    for (let batches = 0; cursor < plan.toSend && batches < batchesPerRun; batches++) {
      const toSeq = Math.min(cursor + batchSize, plan.toSend);
      const done = await pushBatch({ runId: plan.runId, source: plan.source, fromSeq: cursor, toSeq, maxMs });
      totals.sent += done.sent;
      totals.succeeded += done.succeeded;
      totals.failed += done.failed;
      totals.skipped += done.skipped;
      if (done.resumeAfterMs !== undefined && patched('push-batch-resume')) {
        // Stopped by a 5xx, a network error or a 429 after finishing rows: the next batch starts at
        // its first unfinished row (which may be this one's first: the rows after it that finished
        // are in the ledger, so the loop advances) after the server's delay. Such a batch threw
        // before, and Temporal's growing delays ran it again until attempts ran out.
        cursor = Math.min(done.nextSeq, toSeq);
        await sleep(done.resumeAfterMs);
      } else {
        // At least one row per batch, so the loop always advances.
        cursor = Math.max(cursor + 1, Math.min(done.nextSeq, toSeq));
      }
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (isCancellation(err)) {
      // The cancelled scope cannot run activities: record the outcome outside it.
      await CancellationScope.nonCancellable(() => finishPush({ runId: plan.runId, status: 'cancelled', totals, error: message }));
      throw err;
    }
    await finishPush({ runId: plan.runId, status: 'failed', totals, error: message });
    throw err instanceof TemporalFailure ? err : ApplicationFailure.nonRetryable(message, 'PUSH_FAILED');
  }
  if (cursor < plan.toSend) return await continueAsNew<typeof pushWorkflow>({ ...input, resume: { plan, cursor, totals } });
  await finishPush({ runId: plan.runId, status: 'succeeded', totals });
  phase = 'done';
  return { ...totals, runId: plan.runId, source: plan.source, rowsRead: plan.rowsRead, counts: plan.counts, toSend: plan.toSend };
}

/**
 * The ledger's and `_push_runs`' name for this push: the workflow id (one per source) and the
 * time this start began, so a later push of the source is a run of its own and sends again the
 * rows an earlier one failed. A continued-as-new run keeps its plan's id. (Histories recorded
 * before the patch named the run by the workflow id alone.)
 */
function pushRunId(): string {
  const info = workflowInfo();
  return patched('push-run-per-start') ? `${info.workflowId}@${info.runStartTime.toISOString()}` : info.workflowId;
}
