import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { expect, inject } from 'vitest';
import { DEFAULT_PUSH_CONCURRENCY } from '../../../src/push/send-batch.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { PushWorkflowResult } from '../../../workflows/push-types.js';
import { testTemporalAddress, testWorkflowBundlePath } from '../../helpers/temporal.js';
import { killHard, startChild, waitFor, withDuckDb } from './child-worker.js';
import { startRecordingProxy } from './recording-proxy.js';

const ROWS = 300;
const CONCURRENCY = DEFAULT_PUSH_CONCURRENCY;

/**
 * A worker in a child process is SIGKILLed mid-push and a second one finishes the push. A
 * recording proxy in front of the simulator shows every upsert: no row the ledger held as pushed
 * at the kill may be sent again; only rows in flight may go twice, each once more.
 */
export async function runCrashScenario(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-push-crash-'));
  const sim = await startSimulator({ contacts: 5, seed: 21, faults: { rateLimitRps: 60 } });
  const proxy = await startRecordingProxy(sim.baseUrl);
  const children: ChildProcess[] = [];
  const connection = await Connection.connect({ address: testTemporalAddress() });
  try {
    const dbPath = join(dir, 'crm.duckdb');
    const env = {
      ...process.env,
      CRM_BASE_URL: proxy.baseUrl,
      CRM_USERNAME: sim.credentials.username,
      CRM_PASSWORD: sim.credentials.password,
      CRMSYNC_DB: dbPath,
      CRMSYNC_LAKE: join(dir, 'lake'),
      CRMSYNC_DATA_DIR: dir,
      PUSH_CHILD_TEMPORAL_ADDRESS: testTemporalAddress(),
      PUSH_CHILD_NAMESPACE: inject('temporalNamespace'),
      PUSH_CHILD_BUNDLE: testWorkflowBundlePath(),
      PUSH_CHILD_TASK_QUEUE: `push-crash-${randomUUID()}`,
    };
    await withDuckDb(dbPath, (db) =>
      db.query(`CREATE TABLE crash_source AS SELECT 'crash' || i || '@example.test' AS email, 'subscribed' AS status, 'Name' || i AS first_name FROM range(${ROWS}) t(i)`),
    );

    children.push(await startChild(env));
    const client = new Client({ connection, namespace: inject('temporalNamespace') });
    const handle = await client.workflow.start('pushWorkflow', {
      taskQueue: env.PUSH_CHILD_TASK_QUEUE,
      workflowId: `push-crash-${randomUUID()}`,
      args: [{ from: 'crash_source', batchSize: 50, heartbeatTimeoutMs: 2000 }],
    });

    // Kill mid-batch, once a good share of the rows has landed.
    await waitFor(() => proxy.upserts.filter((u) => u.status === 200).length >= ROWS / 3, 90_000);
    await killHard(children[0]!);

    // What the dead worker recorded as pushed: none of these may be sent again.
    const pushedBeforeKill = await withDuckDb(dbPath, async (db) => (await db.query(`SELECT push_key FROM _push_ledger WHERE outcome = 'succeeded'`)).map((r) => String(r.push_key)));
    expect(pushedBeforeKill.length).toBeGreaterThan(0);
    expect(pushedBeforeKill.length).toBeLessThan(ROWS);

    children.push(await startChild(env));
    const result = (await handle.result()) as PushWorkflowResult;
    expect(result.succeeded + result.skipped).toBe(ROWS);
    expect(result.failed).toBe(0);

    const sends = new Map<string, number>();
    for (const u of proxy.upserts) if (u.status !== 429) sends.set(u.email, (sends.get(u.email) ?? 0) + 1);
    const resentAfterSuccess = pushedBeforeKill.filter((k) => (sends.get(k) ?? 0) > 1);
    expect(resentAfterSuccess).toEqual([]);
    // Only rows in flight at the kill may go twice, each at most once more.
    const twice = [...sends].filter(([, n]) => n > 1);
    expect(twice.every(([, n]) => n === 2)).toBe(true);
    expect(twice.length).toBeLessThanOrEqual(CONCURRENCY);

    const landed = sim.truth().contacts.filter((c) => c.email.startsWith('crash'));
    expect(landed.length).toBe(ROWS);
    expect(landed.every((c) => c.first_name === `Name${c.email.slice(5, c.email.indexOf('@'))}`)).toBe(true);
    console.log(`crash test: ${pushedBeforeKill.length} pushed before SIGKILL, ${twice.length} in-flight rows sent twice, ${result.skipped} skipped on resume`);
  } finally {
    for (const c of children) await killHard(c);
    await connection.close();
    await proxy.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
