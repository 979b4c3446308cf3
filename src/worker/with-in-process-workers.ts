import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { warehouseWorkerPolls } from '../temporal/warehouse-worker-polls.js';
import { WarehouseOwnedError, type WarehouseOwner } from '../warehouse/index.js';
import { runComposedWorkers } from './compose.js';
import { limitHeapGrowth } from './limit-heap-growth.js';
import { openOwnerFromConfig } from './open-owner-from-config.js';

/**
 * Runs this process's workers while `fn` runs, then drains them (`crmsync sync`, `demo`, `push`
 * on the embedded default). When a worker already polls the warehouse queue (a `crmsync worker`,
 * or another command's in-process workers) and owns the DuckDB file, `fn` uses it and none start.
 * A poller whose file is free is gone (Temporal lists a killed worker's pollers for a while): its
 * runs are orphans, and this process's workers serve them.
 */
export async function withInProcessWorkers<T>(options: { config: Config; logger: Logger; client: Client; nativeConnection: NativeConnection; namespace: string }, fn: () => Promise<T>): Promise<T> {
  const { config, logger } = options;
  const queue = taskQueues(config).warehouse;
  let owner: WarehouseOwner | undefined;
  if (await warehouseWorkerPolls(options.client, queue)) {
    owner = await openOwnerFromConfig(config, logger).catch((err: unknown) => {
      if (err instanceof WarehouseOwnedError) return undefined;
      throw err;
    });
    if (!owner) {
      logger.info({ taskQueue: queue }, 'a warehouse worker is running; using it');
      return await fn();
    }
    logger.info({ taskQueue: queue }, 'the warehouse worker that polled last is gone; serving its runs here');
  }
  // This process now serves the runs, backfills included: the same heap policy as `crmsync worker`.
  limitHeapGrowth(config.workerHeapGrowthPercent);
  const abort = new AbortController();
  const workers = runComposedWorkers({ config, logger, nativeConnection: options.nativeConnection, namespace: options.namespace, signal: abort.signal, ...(owner ? { owner } : {}) });
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
