import { fileURLToPath } from 'node:url';
import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from '../logger.js';
import { bundleWorkflowsInChild } from './bundle-workflows.js';
import { cachedWorkflowBundle } from './workflow-bundle-cache.js';
import type { TaskQueues } from './task-queues.js';

export interface RunWorkersOptions {
  nativeConnection: NativeConnection;
  namespace: string;
  taskQueues: TaskQueues;
  /** Activities for the main queue (CRM side). */
  activities: object;
  /**
   * Activities for the warehouse queue, served by this one process: the one DuckDB writer. A
   * promise lets the workflow worker be created while they are still being built.
   */
  warehouseActivities: object | Promise<object>;
  /**
   * Warehouse activities at once (default 1). Raise it only when those activities serialize
   * their DuckDB writes themselves (for example through one write queue).
   */
  warehouseConcurrency?: number;
  /** Defaults to resolveWorkflowsPath(); ignored when workflowBundle is given. */
  workflowsPath?: string;
  /** A prebuilt bundle (tests bundle once per run). */
  workflowBundle?: WorkflowBundleOption;
  /** Aborting drains both workers; runWorkers resolves once they have stopped. */
  signal?: AbortSignal;
  logger?: Logger;
}

/**
 * workflows/index.ts when running from source (tsx, vitest), dist/workflows/index.js when built:
 * this file sits at src/temporal/ in both trees.
 */
export function resolveWorkflowsPath(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../../workflows/index.${ext}`, import.meta.url));
}

/**
 * One worker on the main queue (workflows and CRM activities) and one on the warehouse queue, in
 * this process, until `signal` aborts or either fails (then the other is drained too).
 */
export async function runWorkers(options: RunWorkersOptions): Promise<void> {
  if (options.signal?.aborted) return;
  const workflowsPath = options.workflowsPath ?? resolveWorkflowsPath();
  // The workflow worker loads the bundle in a thread of its own, most of a short command's start:
  // it is created while the warehouse activities are still being built (their DuckDB file opened
  // and migrated).
  const main = (async () =>
    await Worker.create({
      connection: options.nativeConnection,
      namespace: options.namespace,
      taskQueue: options.taskQueues.main,
      workflowBundle: options.workflowBundle ?? (await cachedWorkflowBundle(workflowsPath, () => bundleWorkflowsInChild(workflowsPath))),
      activities: options.activities,
      // A crashed worker's sticky queue holds workflow tasks until this passes (default 10 s):
      // a restarted worker picks its workflows up sooner.
      stickyQueueScheduleToStartTimeout: '3s',
    }))();
  main.catch(() => undefined); // read below, with the warehouse worker's outcome
  const warehouse = (async () => {
    const activities = await options.warehouseActivities;
    // Not before the workflow worker exists: a warehouse worker disposed of after a failed
    // bundle would poll for a moment and could take an activity it then must finish.
    await main;
    if (Object.keys(activities).length === 0) {
      options.logger?.warn({ taskQueue: options.taskQueues.warehouse }, 'no warehouse activities registered; not polling the warehouse queue');
      return undefined;
    }
    return await Worker.create({
      connection: options.nativeConnection,
      namespace: options.namespace,
      taskQueue: options.taskQueues.warehouse,
      activities,
      maxConcurrentActivityTaskExecutions: options.warehouseConcurrency ?? 1,
      // Heartbeats carry cancellation back: sent at most this far apart (the default is 80% of
      // the heartbeat timeout, 16 s), a cancelled sync stops within a second or two.
      maxHeartbeatThrottleInterval: '1s',
    });
  })();
  const created = await Promise.allSettled([main, warehouse]);
  const workers = created.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const failed = created.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // A created worker holds a thread and a registration with the server until it has run and
    // stopped (only the workflow worker can be here: its tasks are short).
    await Promise.all(workers.map((w) => w.runUntil(Promise.resolve()).catch(() => undefined)));
    throw failed.reason;
  }
  const stopAll = (): void => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  options.signal?.addEventListener('abort', stopAll, { once: true });
  try {
    options.logger?.info({ taskQueues: workers.map((w) => w.options.taskQueue) }, 'workers polling');
    const running = workers.map((w) =>
      w.run().catch((err: unknown) => {
        stopAll();
        throw err;
      }),
    );
    // An abort that landed while the workers were being created.
    if (options.signal?.aborted) stopAll();
    const results = await Promise.allSettled(running);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    options.signal?.removeEventListener('abort', stopAll);
  }
}
