import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createSyncActivities } from '../../../activities/sync-activities.js';
import { loadConfig, type Config } from '../../../src/config.js';
import { silentLogger } from '../../../src/logger.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../../src/simulator/index.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { runSyncWorkers } from '../../../src/sync/run-sync-workers.js';
import { createSyncRuntime, warehouseOpener, type SyncRuntime } from '../../../src/sync/sync-runtime.js';
import type { WarehouseSession } from '../../../src/sync/warehouse-port.js';
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
  runtime: SyncRuntime;
  sync(input?: Partial<Omit<SyncWorkflowInput, 'warehouseTaskQueue'>>): Promise<SyncResult>;
  read<T>(fn: (w: WarehouseSession) => Promise<T>): Promise<T>;
  /** Starts an in-process worker (stopped by the returned function, and at the end of the env). */
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
  const runtime = createSyncRuntime(config);
  const stops = new Set<() => Promise<void>>();
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  const native = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS as string });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const startWorker = (): (() => Promise<void>) => {
    const abort = new AbortController();
    const running = runSyncWorkers({
      nativeConnection: native,
      namespace: config.temporal.namespace,
      taskQueues: queues,
      activities: {},
      warehouseActivities: createSyncActivities({ ...runtime, logger: silentLogger }),
      warehouseConcurrency: 8,
      workflowBundle: { codePath: testWorkflowBundlePath() },
      signal: abort.signal,
    });
    const stop = async (): Promise<void> => {
      stops.delete(stop);
      abort.abort();
      await running;
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
      runtime,
      startWorker,
      sync: (input = {}) => runSync({ client, taskQueues: queues, input: { streams: ['contacts'], tuning: SMALL_TUNING, ...input } }),
      read: (f) => runtime.writes.run(f),
    });
  } finally {
    for (const stop of [...stops]) await stop().catch(() => undefined);
    await runtime.close();
    await native.close();
    await connection.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export { warehouseOpener };
