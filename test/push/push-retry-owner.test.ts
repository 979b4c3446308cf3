import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { createPushActivities } from '../../activities/push-activities.js';
import { createRateLimiter } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { pushCrmFromClient } from '../../src/push/push-crm-from-client.js';
import type { PushCrm } from '../../src/push/push-crm.js';
import type { PushWorkflowResult } from '../../workflows/push-types.js';
import { withTestWorker } from '../helpers/temporal.js';
import { withPushDb } from './helpers/push-db.js';
import { upsertRequests, withSimClient } from './helpers/sim-client.js';

const ROWS = 8;

describe('push retries belong to Temporal and the workflow', () => {
  it('a row hitting 429 is sent once per activity attempt, ends succeeded in a later batch or attempt, and is recorded once', { timeout: 120_000 }, async () => {
    // The server allows 3 upserts a second and the client's limiter knows nothing of it: rows of
    // the first batch meet 429s, which end it; the rows it did not finish are sent by the next
    // batch the workflow starts (or by Temporal's next attempt of one that finished nothing).
    await withSimClient({ contacts: 3, seed: 31, faults: { rateLimitRps: 3 } }, { limiter: createRateLimiter({ maxRps: 500, adaptive: false }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        await db.query(`CREATE TABLE upserts AS SELECT 'owner' || i || '@example.test' AS email, 'subscribed' AS status FROM range(${ROWS}) t(i)`);
        // The real client under a counter: which attempt of the activity sent which row.
        const sends = new Map<string, number>();
        const real = pushCrmFromClient(client);
        const crm: PushCrm = {
          ...real,
          upsertContact: (body) => {
            const { activityId, attempt } = Context.current().info;
            const key = `${activityId}.${attempt}:${body.email}`;
            sends.set(key, (sends.get(key) ?? 0) + 1);
            return real.upsertContact(body);
          },
        };
        const activities = createPushActivities({ crm, db, logger: silentLogger, concurrency: 4 });
        await withTestWorker({ warehouseActivities: activities }, async ({ client: temporal, taskQueue }) => {
          const result: PushWorkflowResult = await temporal.workflow.execute('pushWorkflow', {
            taskQueue,
            workflowId: `push-owner-${randomUUID()}`,
            args: [{ from: 'upserts' }],
          });
          expect(sim.stats().status429).toBeGreaterThan(0); // otherwise this test proves nothing
          // The refused rows were sent again, by another batch or another attempt of the same.
          expect(new Set([...sends.keys()].map((k) => k.split(':')[0])).size).toBeGreaterThan(1);
          expect(Math.max(...sends.values())).toBe(1); // no row sent twice within one attempt
          expect(result).toMatchObject({ toSend: ROWS, sent: ROWS, succeeded: ROWS, failed: 0, skipped: 0 });
          const ledger = await db.query(`SELECT push_key, outcome, attempts, failures FROM _push_ledger ORDER BY push_key`);
          expect(ledger).toHaveLength(ROWS);
          for (const row of ledger) expect(row).toMatchObject({ outcome: 'succeeded', attempts: 1, failures: 0 });
          // Each row reached the CRM once per attempt that sent it, and no more.
          expect(upsertRequests(sim)).toBe(sends.size);
        });
      });
    });
  });
});
