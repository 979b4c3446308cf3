import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from '../logger.js';
import { bundleWorkflows } from '../temporal/bundle-workflows.js';
import type { TaskQueues } from '../temporal/task-queues.js';
import { resolveWorkflowsPath } from '../temporal/worker.js';

export interface RunSyncWorkersOptions {
  nativeConnection: NativeConnection;
  namespace: string;
  taskQueues: TaskQueues;
  activities: object;
  warehouseActivities: object;
  /**
   * Warehouse-queue activities running at once in this one process. Sync activities overlap
   * their CRM fetches but serialize every DuckDB write through the process's write queue, so
   * this stays one writer however high it is.
   */
  warehouseConcurrency: number;
  workflowBundle?: WorkflowBundleOption;
  signal?: AbortSignal;
  logger?: Logger;
}

/**
 * Like src/temporal runWorkers, with the warehouse worker's concurrency raised for sync's
 * parallel page ranges (runWorkers serves that queue one activity at a time).
 */
export async function runSyncWorkers(options: RunSyncWorkersOptions): Promise<void> {
  if (options.signal?.aborted) return;
  const workflowBundle = options.workflowBundle ?? { code: (await bundleWorkflows(resolveWorkflowsPath())).code };
  const workers = [
    await Worker.create({
      connection: options.nativeConnection,
      namespace: options.namespace,
      taskQueue: options.taskQueues.main,
      workflowBundle,
      activities: options.activities,
      // A crashed worker's sticky queue holds workflow tasks until this passes (default 10 s).
      stickyQueueScheduleToStartTimeout: '3s',
    }),
    await Worker.create({
      connection: options.nativeConnection,
      namespace: options.namespace,
      taskQueue: options.taskQueues.warehouse,
      activities: options.warehouseActivities,
      maxConcurrentActivityTaskExecutions: options.warehouseConcurrency,
    }),
  ];
  const stopAll = (): void => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  options.signal?.addEventListener('abort', stopAll, { once: true });
  try {
    const running = workers.map((w) =>
      w.run().catch((err: unknown) => {
        stopAll();
        throw err;
      }),
    );
    if (options.signal?.aborted) stopAll();
    const results = await Promise.allSettled(running);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    options.signal?.removeEventListener('abort', stopAll);
  }
}
