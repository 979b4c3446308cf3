import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createActivities } from '../../../activities/index.js';
import { loadConfig, type Config } from '../../../src/config.js';
import { silentLogger } from '../../../src/logger.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../../src/simulator/index.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { crmClientFromConfig, type CrmClient } from '../../../src/crm/index.js';
import type { WarehouseSession, WriteJobs } from '../../../src/sync/warehouse-port.js';
import { runWorkers } from '../../../src/temporal/worker.js';
import { withWarehouse, type WarehouseOwner } from '../../../src/warehouse/index.js';
import { openOwnerFromConfig } from '../../../src/worker/open-owner-from-config.js';
import { taskQueues, type TaskQueues } from '../../../src/temporal/task-queues.js';
import type { SyncResult, SyncWorkflowInput } from '../../../workflows/sync-types.js';
import { testWorkflowBundlePath } from '../../helpers/temporal.js';
import { testEnv } from '../../helpers/test-env.js';

export interface SyncEnv {
  sim: RunningSimulator;
  config: Config;
  /** Environment for a child process (the CLI) pointing at the same simulator, warehouse and Temporal. */
  env: Record<string, string>;
  dir: string;
  client: Client;
  queues: TaskQueues;
  /** The CRM client, and the warehouse's writes: jobs on the running worker's owner, else one-shot write scopes. */
  runtime: { client: CrmClient; writes: WriteJobs };
  sync(input?: Partial<Omit<SyncWorkflowInput, 'warehouseTaskQueue'>>): Promise<SyncResult>;
  read<T>(fn: (w: WarehouseSession) => Promise<T>): Promise<T>;
  /** Starts an in-process worker, the owner of the warehouse file while it runs (stopped by the returned function, and at the end of the env). */
  startWorker(): () => Promise<void>;
}

export const SMALL_TUNING = { perPage: 50, parallelism: 3, maxPagesPerRange: 4, heartbeatTimeoutMs: 4_000 };

/**
 * A simulator, a temp warehouse, a unique task-queue scope on the shared Temporal dev server,
 * and (unless `worker: false`) an in-process worker: all torn down after `fn`, even on failure.
 */
export async function withSyncEnv<T>(
  opts: { sim?: SimulatorOptions; worker?: boolean; /** Extra or overriding crmsync variables (e.g. CRM_TIMEZONE). */ env?: Record<string, string> },
  fn: (env: SyncEnv) => Promise<T>,
): Promise<T> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already in this process
  }
  const sim = await startSimulator({ seed: 7, contacts: 300, ...opts.sim });
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-sync-'));
  const env = testEnv(sim, dir, { CRM_ALLOW_INSECURE_HTTP: '1', CRMSYNC_TASK_QUEUE: `t-${randomUUID().slice(0, 12)}`, CRMSYNC_LOG_LEVEL: 'warn', ...opts.env });
  const config = loadConfig(env);
  const queues = taskQueues(config);
  const crm = crmClientFromConfig(config);
  // The worker owns the file while it runs (as `crmsync worker` does); between workers, a child
  // `crmsync` process may own it instead.
  let owner: WarehouseOwner | undefined;
  let workersRunning = 0;
  const writes: WriteJobs = {
    run: (job) => (owner ? owner.run(job) : withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true, siteTimeZone: config.crm.timezone }, job)),
  };
  const stops = new Set<() => Promise<void>>();
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  const native = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS as string });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const startWorker = (): (() => Promise<void>) => {
    const abort = new AbortController();
    workersRunning++;
    const running = (async () => {
      owner ??= await openOwnerFromConfig(config);
      const activities = createActivities({ config, logger: silentLogger, crm, owner });
      await runWorkers({
        nativeConnection: native,
        namespace: config.temporal.namespace,
        taskQueues: queues,
        activities: activities.main,
        warehouseActivities: activities.warehouse,
        warehouseConcurrency: 8,
        workflowBundle: { codePath: testWorkflowBundlePath() },
        signal: abort.signal,
      });
    })();
    const stop = async (): Promise<void> => {
      stops.delete(stop);
      abort.abort();
      try {
        await running;
      } finally {
        if (--workersRunning === 0) {
          await owner?.close();
          owner = undefined;
        }
      }
    };
    stops.add(stop);
    return stop;
  };
  try {
    if (opts.worker !== false) startWorker();
    return await fn({
      sim,
      config,
      env,
      dir,
      client,
      queues,
      runtime: { client: crm, writes },
      startWorker,
      sync: (input = {}) => runSync({ client, taskQueues: queues, input: { streams: ['contacts'], tuning: SMALL_TUNING, ...input } }),
      read: (f) => writes.run(f),
    });
  } finally {
    for (const stop of [...stops]) await stop().catch(() => undefined);
    await crm.close();
    await native.close();
    await connection.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
