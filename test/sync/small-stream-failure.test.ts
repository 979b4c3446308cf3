import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING, type StreamWorkflowInput } from '../../workflows/sync-types.js';
import { withProductionWorkers } from '../helpers/temporal.js';

/**
 * A small stream's run is one activity that writes its own start and final records
 * (syncSmallStream). When it fails for good, the stream workflow still records the run as
 * failed, with the error that names the fix, so `crmsync status` shows the failure.
 */
describe('a small stream that fails for good', () => {
  it('fails the stream and records the run as failed with its error', { timeout: 60_000 }, async () => {
    const records: { status: string; error: string | null; stream: string }[] = [];
    const warehouseActivities = {
      recordStreamRun: async (input: { status: string; error: string | null; stream: string }) => {
        records.push({ status: input.status, error: input.error, stream: input.stream });
      },
      syncSmallStream: async () => {
        throw ApplicationFailure.nonRetryable('the CRM refused the tags listing (403); give the API user the tags permission', 'CRM_FORBIDDEN');
      },
    };
    await withProductionWorkers({ warehouseActivities, warehouseConcurrency: 2 }, async ({ client, taskQueue, warehouseTaskQueue }) => {
      const input: StreamWorkflowInput = { runId: 'run-1', stream: 'tags', full: false, reconcile: 'auto', reconcileEveryMs: 86_400_000, tuning: DEFAULT_TUNING, warehouseTaskQueue };
      const outcome = await client.workflow.execute('syncStreamWorkflow', { taskQueue, workflowId: `stream-${randomUUID()}`, args: [input] }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(outcome).toBeInstanceOf(WorkflowFailedError);
      expect(records).toEqual([{ status: 'failed', error: expect.stringMatching(/tags permission/), stream: 'tags' }]);
    });
  });
});
