import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { warehouseWorkerPolls } from '../temporal/warehouse-worker-polls.js';
import { runComposedWorkers } from './compose.js';

/**
 * Runs this process's workers while `fn` runs, then drains them (`crmsync sync`, `demo`, `push`
 * on the embedded default). When a worker already polls the warehouse queue (a `crmsync worker`,
 * or another command's in-process workers) it owns the DuckDB file: `fn` uses it and none start.
 */
export async function withInProcessWorkers<T>(
  options: { config: Config; logger: Logger; client: Client; nativeConnection: NativeConnection; namespace: string },
  fn: () => Promise<T>,
): Promise<T> {
  const { config, logger } = options;
  const queue = taskQueues(config).warehouse;
  if (await warehouseWorkerPolls(options.client, queue)) {
    logger.info({ taskQueue: queue }, 'a warehouse worker is running; using it');
    return await fn();
  }
  const abort = new AbortController();
  const workers = runComposedWorkers({ config, logger, nativeConnection: options.nativeConnection, namespace: options.namespace, signal: abort.signal });
  // A worker that dies (bad bundle, lost connection, a file owned elsewhere) must fail `fn` rather than leave it waiting.
  const failed = workers.then(
    () => new Promise<never>(() => undefined),
    (err: unknown) => Promise.reject(err),
  );
  failed.catch(() => undefined); // seen through the race; a failure after `fn` settled is logged below
  try {
    return await Promise.race([fn(), failed]);
  } finally {
    abort.abort();
    await workers.catch((err: unknown) => logger.debug({ err }, 'worker stopped with an error'));
  }
}
