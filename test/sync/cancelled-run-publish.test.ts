import { WorkflowFailedError } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { SyncWorkflowInput } from '../../workflows/sync-types.js';
import { withProductionWorkers } from '../helpers/temporal.js';

/**
 * A cancelled run (Ctrl-C on `crmsync sync`, `temporal workflow cancel`) publishes the lake after
 * its streams recorded `cancelled`: `status`, `query` and the report read the lake, and without
 * it they showed the run before, and none of the rows loaded before the cancel, until a later run.
 * Stand-in warehouse activities; the stream's work never ends by itself.
 */
describe('a cancelled sync run', () => {
  for (const publishFails of [false, true]) {
    it(`records each stream as cancelled, then publishes the lake${publishFails ? ', and is still reported cancelled when that publish fails' : ''}`, { timeout: 60_000 }, async () => {
      const calls: string[] = [];
      let working!: () => void;
      const started = new Promise<void>((resolve) => (working = resolve));
      const warehouseActivities = {
        recordStreamRun: async (input: { status: string }) => {
          calls.push(`record ${input.status}`);
          return { published: false };
        },
        syncSmallStream: async () => {
          // Works until cancelled, heartbeating as the real activities do (so the cancel reaches it).
          const context = Context.current();
          working();
          for (;;) {
            context.heartbeat();
            await Promise.race([context.cancelled, context.sleep(200)]);
          }
        },
        publishLake: async () => {
          calls.push('publish');
          if (publishFails) throw new Error('disk full');
        },
      };
      await withProductionWorkers({ warehouseActivities, warehouseConcurrency: 2 }, async ({ client, taskQueue, warehouseTaskQueue }) => {
        const input: SyncWorkflowInput = { streams: ['tags'], warehouseTaskQueue, idScope: taskQueue };
        const handle = await client.workflow.start('syncWorkflow', { taskQueue, workflowId: `${taskQueue}-run`, args: [input] });
        await started;
        await handle.cancel();
        const outcome = await handle.result().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(outcome).toBeInstanceOf(WorkflowFailedError);
        expect((outcome as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
        expect(calls.filter((c) => c !== 'publish')).toEqual(['record cancelled']);
        // Published once the stream's record landed; a failed publish is retried by Temporal first.
        expect(calls.indexOf('publish')).toBe(1);
      });
    });
  }
});
