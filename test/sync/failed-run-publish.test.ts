import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { SyncWorkflowInput } from '../../workflows/sync-types.js';
import { withProductionWorkers } from '../helpers/temporal.js';

/**
 * A run whose every stream fails still publishes the lake: `crmsync status`, `crmsync query` and
 * the report read the lake, and without it a scheduled run that failed (wrong credentials, a
 * refused listing) showed nothing until a later run succeeded. Stand-in warehouse activities.
 */
describe('a sync run whose every stream failed', () => {
  for (const publishFails of [false, true]) {
    it(`publishes the lake with the failures' records${publishFails ? ', and still reports the stream error when that publish fails' : ''}`, { timeout: 60_000 }, async () => {
      const calls: string[] = [];
      const warehouseActivities = {
        recordStreamRun: async (input: { status: string }) => {
          calls.push(`record ${input.status}`);
          return { published: false };
        },
        syncSmallStream: async () => {
          throw ApplicationFailure.nonRetryable('the CRM refused the tags listing (403); give the API user the tags permission', 'CRM_FORBIDDEN');
        },
        publishLake: async () => {
          calls.push('publish');
          if (publishFails) throw ApplicationFailure.nonRetryable('disk full', 'WAREHOUSE_IO');
        },
      };
      await withProductionWorkers({ warehouseActivities, warehouseConcurrency: 2 }, async ({ client, taskQueue, warehouseTaskQueue }) => {
        const input: SyncWorkflowInput = { streams: ['tags'], warehouseTaskQueue, idScope: taskQueue };
        const outcome = await client.workflow.execute('syncWorkflow', { taskQueue, workflowId: `${taskQueue}-run`, args: [input] }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(outcome).toBeInstanceOf(WorkflowFailedError);
        expect(String((outcome as WorkflowFailedError).cause?.message)).toMatch(/Sync failed for tags: .*tags permission/);
        expect(calls).toEqual(['record failed', 'publish']);
      });
    });
  }
});
