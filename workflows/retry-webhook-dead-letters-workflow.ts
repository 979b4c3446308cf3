import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { RetryDeadLettersInput, RetryDeadLettersResult, WebhookActivities } from './webhook-apply-types.js';

/** Most letters one part retries: keeps each result, and so the history, small. */
const MAX_PER_PART = 200;

/**
 * One part of `crmsync webhooks dead-letters --retry`: the activity runs on the warehouse queue,
 * where the DuckDB file's owner is, so retrying never opens the file beside a running worker.
 */
export async function retryWebhookDeadLettersWorkflow(input: RetryDeadLettersInput): Promise<RetryDeadLettersResult> {
  const { retryWebhookDeadLetters } = proxyActivities<WebhookActivities>({
    taskQueue: `${workflowInfo().taskQueue}-warehouse`,
    startToCloseTimeout: '15 minutes',
    // A retried attempt counts letters that failed again once more: a few attempts, not forever.
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
  });
  return await retryWebhookDeadLetters({ ...input, limit: Math.max(1, Math.min(input.limit, MAX_PER_PART)) });
}
