import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { createPushActivities } from '../../activities/push-activities.js';
import { createCrmClient } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { pushCrmFromClient } from '../../src/push/push-crm-from-client.js';
import type { PushWorkflowResult } from '../../workflows/push-types.js';
import { withTestWorker } from '../helpers/temporal.js';
import { runCrashScenario } from './helpers/crash-scenario.js';
import { withPushDb } from './helpers/push-db.js';
import { withRemoteSimulator } from './helpers/remote-simulator.js';
import { upsertRequests, withSimClient } from './helpers/sim-client.js';

// The full size is 2,000 rows (about 100 s); 1,000 proves the same in half the time.
// PUSH_TEST_ROWS=2000 runs the full size; bench/push.ts records the figures.
/** Every payload of a history (JSON form, data in base64) decoded and joined. */
function decodedPayloads(historyJson: string): string {
  const out: string[] = [];
  JSON.parse(historyJson, (key, value: unknown) => {
    if (key === 'data' && typeof value === 'string') out.push(Buffer.from(value, 'base64').toString('utf8'));
    return value;
  });
  return out.join('\n');
}

const ROWS = Number(process.env.PUSH_TEST_ROWS ?? 1000);
const LIMIT_RPS = 20;

/** Source rows with names, phones, custom values, tags and lists by title. */
const sourceSql = (n: number) => `CREATE OR REPLACE TABLE upserts AS
  SELECT 'wf' || i || '@example.test' AS email,
         ['subscribed', 'pending', 'unsubscribed'][1 + i % 3] AS status,
         'First' || i AS first_name, 'Last' || (i % 97) AS last_name, '+1-555-' || lpad((i % 10000)::VARCHAR, 4, '0') AS phone,
         ['Berlin', 'Porto', 'Austin'][1 + i % 3] AS city,
         ['Red', 'Green', 'Blue'][1 + i % 3] AS cf_favorite_color,
         CASE WHEN i % 4 = 0 THEN ['VIP'] ELSE ['Trial User', 'Newsletter Reader'] END AS tags,
         ['Prospects'] AS lists
  FROM range(${n}) t(i)`;

describe('pushWorkflow against a rate-limited simulator', () => {
  it(`lands ${ROWS} rows near a ${LIMIT_RPS} req/s limit (>= 85% once found) with < 1% 429s; a rerun sends nothing; 10 changes send 10`, { timeout: 240_000 }, async () => {
    // The simulator serves from its own process, like a remote CRM: its work must not delay the
    // client's pacing timers in this one.
    await withRemoteSimulator({ contacts: 10, seed: 11, faults: { rateLimitRps: LIMIT_RPS } }, async (sim) => {
      const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
      const upserts = async () => (await sim.stats()).byRoute['POST /subscribers'] ?? 0;
      try {
        await withPushDb(async (db) => {
          await db.query(sourceSql(ROWS));
          const activities = createPushActivities({ crm: pushCrmFromClient(client), db, logger: silentLogger });
          await withTestWorker({ warehouseActivities: activities }, async ({ client: temporal, taskQueue }) => {
            const run = (): Promise<PushWorkflowResult> => temporal.workflow.execute('pushWorkflow', { taskQueue, workflowId: `push-${randomUUID()}`, args: [{ from: 'upserts' }] });

            const started = performance.now();
            const first = await run();
            const seconds = (performance.now() - started) / 1000;
            const requests = await upserts();
            const stats = await sim.stats();
            // Rates from the ledger's success times (the plan and worker start-up excluded): over the
            // whole send, and after the first tenth of the rows, once the client has found the limit.
            const times = (await db.query(`SELECT epoch_ms(succeeded_at) AS t FROM _push_ledger WHERE outcome = 'succeeded' ORDER BY t`)).map((r) => Number(r.t));
            const rateOver = (from: number) => (times.length - 1 - from) / ((times[times.length - 1]! - times[from]!) / 1000);
            const achieved = rateOver(0);
            const steady = rateOver(Math.floor(times.length / 10));
            console.log(
              `push: ${first.succeeded} rows, workflow ${seconds.toFixed(1)} s; send rate ${achieved.toFixed(2)} req/s (${((100 * achieved) / LIMIT_RPS).toFixed(1)}% of ${LIMIT_RPS}), ` +
                `after discovery ${steady.toFixed(2)} req/s (${((100 * steady) / LIMIT_RPS).toFixed(1)}%), 429s ${stats.status429}/${requests}`,
            );
            expect(first).toMatchObject({ toSend: ROWS, sent: ROWS, succeeded: ROWS, failed: 0, skipped: 0 });
            expect(stats.status429 / requests).toBeLessThan(0.01);
            // The limit is approached. On an idle machine this measures 92-96% once found (the
            // figure the issue asks for, recorded by bench/push.ts and PUSH_TEST_ROWS=2000); inside
            // the full suite other test files share the 2 cores and a cold CI run measured 89%, so
            // the floors leave room for that while still catching a pusher that idles between
            // rows or batches (which would fall far below them).
            expect(steady).toBeGreaterThanOrEqual(0.85 * LIMIT_RPS);
            expect(achieved).toBeGreaterThanOrEqual(0.8 * LIMIT_RPS);

            // Everything landed and equals the source.
            const truthNow = await sim.truth();
            const truth = new Map(truthNow.contacts.map((c) => [c.email, c]));
            const tagIds = new Map(truthNow.tags.map((t) => [String(t.title), Number(t.id)]));
            const source = await db.query(`SELECT email, status, first_name, last_name, phone, city, cf_favorite_color, tags FROM upserts`);
            const mismatched = source.filter((r) => {
              const c = truth.get(String(r.email));
              const tags = (r.tags as string[]).map((t) => tagIds.get(t)).sort((a, b) => a! - b!);
              return (
                !c ||
                c.status !== r.status ||
                c.first_name !== r.first_name ||
                c.last_name !== r.last_name ||
                c.phone !== r.phone ||
                c.city !== r.city ||
                c.custom_values.favorite_color !== r.cf_favorite_color ||
                JSON.stringify(c.tags) !== JSON.stringify(tags)
              );
            });
            expect(mismatched).toEqual([]);

            // No change: no request at all.
            const before = (await sim.stats()).requests;
            const second = await run();
            expect(second).toMatchObject({ toSend: 0, sent: 0, counts: { unchanged: ROWS } });
            expect((await sim.stats()).requests).toBe(before);

            // Ten changed rows: exactly ten upserts.
            await db.query(`UPDATE upserts SET city = 'Lisbon' WHERE email IN (SELECT email FROM upserts ORDER BY email LIMIT 10)`);
            const sentBefore = (await upserts()) - (await sim.stats()).status429;
            const third = await run();
            expect(third).toMatchObject({ toSend: 10, succeeded: 10, counts: { changed: 10, unchanged: ROWS - 10 } });
            expect((await upserts()) - (await sim.stats()).status429 - sentBefore).toBe(10);
            expect((await sim.truth()).contacts.filter((c) => c.city === 'Lisbon' && c.email.startsWith('wf')).length).toBe(10);
            const ledger = await db.query(`SELECT count(*) AS n FROM _push_ledger WHERE outcome = 'succeeded'`);
            expect(Number(ledger[0]?.n)).toBe(ROWS);
          });
        });
      } finally {
        await client.close();
      }
    });
  });

  // In this file, after the rate test: files run in parallel, and the child workers' start-up
  // would take CPU from the rate measurement.
  it('resumes after SIGKILL of its worker without re-sending any row the ledger shows as pushed', { timeout: 180_000 }, runCrashScenario);

  it('continues as new between batches and carries the plan and totals across runs', async () => {
    await withSimClient({ contacts: 3, seed: 12 }, {}, async (sim, client) => {
      await withPushDb(async (db) => {
        await db.query(sourceSql(7));
        const activities = createPushActivities({ crm: pushCrmFromClient(client), db, logger: silentLogger });
        await withTestWorker({ warehouseActivities: activities }, async ({ client: temporal, taskQueue }) => {
          const workflowId = `push-can-${randomUUID()}`;
          const result: PushWorkflowResult = await temporal.workflow.execute('pushWorkflow', {
            taskQueue,
            workflowId,
            args: [{ from: 'upserts', batchSize: 2, batchesPerRun: 2 }],
          });
          expect(result).toMatchObject({ toSend: 7, sent: 7, succeeded: 7, failed: 0, counts: { new: 7 } });
          // The push is named by its workflow and its first run's start, kept across the continuation.
          expect(result.runId).toMatch(new RegExp(`^${workflowId}@\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`));
          // 4 batches of at most 2 rows, 2 per run: the first run and one continuation.
          const runs = await db.query(`SELECT status, succeeded FROM _push_runs WHERE run_id = ?`, [result.runId]);
          expect(runs).toEqual([{ status: 'succeeded', succeeded: 7 }]);
          expect(await temporal.workflow.getHandle(workflowId).query('pushProgress')).toEqual({
            phase: 'done',
            toSend: 7,
            cursor: 7,
            sent: 7,
            succeeded: 7,
            failed: 0,
            skipped: 0,
          });
          const history = await temporal.workflow.getHandle(workflowId).describe();
          expect(history.runId).not.toBe(history.raw.workflowExecutionInfo?.firstRunId);
          expect(await db.query(`SELECT count(*)::INTEGER AS n FROM _push_plan WHERE run_id = ?`, [result.runId])).toEqual([{ n: 0 }]);
          expect(upsertRequests(sim)).toBe(7);

          // Rows and credentials never enter history: only the source name, counts and cursors.
          const firstRun = temporal.workflow.getHandle(workflowId, history.raw.workflowExecutionInfo?.firstRunId ?? undefined);
          for (const h of [await firstRun.fetchHistory(), await temporal.workflow.getHandle(workflowId).fetchHistory()]) {
            const text = decodedPayloads(historyToJSON(h));
            expect(text).toContain('"from":"upserts"');
            expect(text).not.toContain('@example.test');
            expect(text).not.toContain(sim.credentials.password);
          }
          if (process.env.RECORD_PUSH_HISTORY) {
            await writeFile('test/push/fixtures/push-workflow-history.json', `${JSON.stringify(JSON.parse(historyToJSON(await firstRun.fetchHistory())), null, 2)}\n`);
          }
        });
      });
    });
  });
});
