import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { createPushActivities } from '../../activities/push-activities.js';
import { silentLogger } from '../../src/logger.js';
import { pushCrmFromClient } from '../../src/push/push-crm-from-client.js';
import { pushFailureToError } from '../../src/push/push-failure.js';
import { withTestWorker } from '../helpers/temporal.js';
import { withPushDb } from './helpers/push-db.js';
import { upsertRequests, withSimClient } from './helpers/sim-client.js';

const ROWS = 300;

describe('cancelling a push', () => {
  it('stops sending before it reports cancelled, keeps every answered row in the ledger, and records the run as cancelled', { timeout: 120_000 }, async () => {
    // 30-50 ms a request: the push takes seconds, so the cancel lands with rows in flight.
    await withSimClient({ contacts: 3, seed: 31, faults: { latencyMs: { min: 30, max: 50 } } }, {}, async (sim, client) => {
      await withPushDb(async (db) => {
        await db.query(`CREATE TABLE upserts AS SELECT 'cancel' || i || '@example.test' AS email, 'subscribed' AS status FROM range(${ROWS}) t(i)`);
        const activities = createPushActivities({ crm: pushCrmFromClient(client), db, logger: silentLogger });
        await withTestWorker({ warehouseActivities: activities }, async ({ client: temporal, taskQueue }) => {
          const workflowId = `push-cancel-${randomUUID()}`;
          const handle = await temporal.workflow.start('pushWorkflow', { taskQueue, workflowId, args: [{ from: 'upserts', batchSize: 100 }] });
          for (let i = 0; i < 400 && upsertRequests(sim) < 40; i++) await new Promise((r) => setTimeout(r, 10));
          expect(upsertRequests(sim)).toBeGreaterThanOrEqual(40);
          await handle.cancel();
          const outcome = await handle.result().then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(outcome).toBeInstanceOf(WorkflowFailedError);
          expect((outcome as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
          // What `crmsync push` prints.
          expect(pushFailureToError(outcome)).toMatchObject({ code: 'PUSH_CANCELLED', message: expect.stringMatching(/cancelled.*next push of this source sends the rest/) });

          // Reported cancelled only once the batch had stopped: no request after that.
          const sentAtReturn = upsertRequests(sim);
          expect(sentAtReturn).toBeLessThan(ROWS);
          await new Promise((r) => setTimeout(r, 1_500));
          expect(upsertRequests(sim)).toBe(sentAtReturn);
          // Every request the CRM answered is in the ledger (none was rate limited here).
          expect(sim.stats().status429).toBe(0);
          const ledger = await db.query(`SELECT count(*) AS n FROM _push_ledger WHERE outcome = 'succeeded'`);
          expect(Number(ledger[0]?.n)).toBe(sentAtReturn);
          expect(await db.query(`SELECT status FROM _push_runs WHERE starts_with(run_id, ?)`, [`${workflowId}@`])).toEqual([{ status: 'cancelled' }]);

          // The next push sends only the rows the cancelled one did not.
          const rest: { succeeded: number; skipped: number } = await temporal.workflow.execute('pushWorkflow', {
            taskQueue,
            workflowId: `push-cancel-${randomUUID()}`,
            args: [{ from: 'upserts' }],
          });
          expect(rest.succeeded).toBe(ROWS - sentAtReturn);
          expect(upsertRequests(sim)).toBe(ROWS);
        });
      });
    });
  });
});
