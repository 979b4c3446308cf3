import { continueAsNew, defineQuery, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities, WebhookApplyInput, WebhookApplyTotals } from './webhook-apply-types.js';

/** Where applying stands (the receiver prunes its spool up to `appliedSeq` and reports lag). */
export const webhookApplyStatusQuery = defineQuery<WebhookApplyTotals>('webhookApplyStatus');

/**
 * Applies the webhook spool to the warehouse for as long as it runs: each activity, on the
 * warehouse queue (the DuckDB file's owner), applies the next spool range from the last seq the
 * warehouse records and returns seqs and counts only. Temporal retries the activities; the
 * activity itself sets aside a delivery that fails alone.
 */
export async function webhookApplyWorkflow(input: WebhookApplyInput = {}): Promise<void> {
  const waitMs = Math.max(100, Math.min(input.waitMs ?? 10_000, 60_000));
  const { applyWebhookSpool } = proxyActivities<WebhookActivities>({
    taskQueue: `${workflowInfo().taskQueue}-warehouse`,
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '60 seconds' },
  });
  const totals: WebhookApplyTotals = input.totals ?? { appliedSeq: 0, batches: 0, events: 0, deadLettered: 0 };
  setHandler(webhookApplyStatusQuery, () => totals);
  const iterations = Math.max(1, input.iterationsPerRun ?? 500);
  for (let i = 0; i < iterations; i++) {
    const r = await applyWebhookSpool({ batchSize: Math.max(1, Math.min(input.batchSize ?? 2_000, 20_000)), waitMs });
    totals.appliedSeq = r.appliedSeq;
    if (r.events > 0) totals.batches++;
    totals.events += r.events;
    totals.deadLettered += r.deadLettered;
  }
  await continueAsNew<typeof webhookApplyWorkflow>({ ...input, totals });
}
