import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { warehouseWorkerPolls } from '../temporal/warehouse-worker-polls.js';
import { WarehouseOwnedError } from '../warehouse/errors.js';
import type { WarehouseOwner } from '../warehouse/index.js';

export interface WithInProcessWorkersOptions {
  config: Config;
  logger: Logger;
  client: Client;
  /** Needed when this process may run the workers (always when `linger` is off). */
  nativeConnection: NativeConnection | undefined;
  namespace: string;
  /**
   * Use (or start) the background worker that outlives the command instead of workers in this
   * process. Default: on the embedded default while CRMSYNC_EMBEDDED_IDLE is not 0. The demo
   * turns it off: its CRM is a simulator inside the command.
   */
  linger?: boolean;
}

/** Whether a command on `config` uses the background worker (and needs no worker code of its own). */
export function lingers(config: Config): boolean {
  return !config.temporal.address && (config.temporal.embeddedIdleMs ?? 0) > 0;
}

/**
 * With CRMSYNC_EMBEDDED_IDLE on the embedded default, runs `fn` as a client of the background
 * worker (withBackgroundWorker). Otherwise runs this process's workers while `fn` runs, then drains them (`crmsync sync`, `demo`, `push`
 * on the embedded default). When a worker already polls the warehouse queue (a `crmsync worker`,
 * or another command's in-process workers) and owns the DuckDB file, `fn` uses it and none start.
 * A poller whose file is free is gone (Temporal lists a killed worker's pollers for a while): its
 * runs are orphans, and this process's workers serve them.
 */
export async function withInProcessWorkers<T>(options: WithInProcessWorkersOptions, fn: () => Promise<T>): Promise<T> {
  const { config, logger } = options;
  if (options.linger ?? lingers(config)) {
    // The worker package and DuckDB stay unloaded here: the background worker has them.
    const { withBackgroundWorker } = await import('./with-background-worker.js');
    return await withBackgroundWorker({ config, logger, client: options.client }, fn);
  }
  const nativeConnection = options.nativeConnection;
  if (!nativeConnection) throw new Error('withInProcessWorkers needs a native connection to run workers; connect with { worker: true }');
  const [{ runComposedWorkers }, { limitHeapGrowth }, { openOwnerFromConfig }] = await Promise.all([import('./compose.js'), import('./limit-heap-growth.js'), import('./open-owner-from-config.js')]);
  const queue = taskQueues(config).warehouse;
  // Opening (and migrating) the file and asking who polls run at once: both are on the way to
  // the workers, and the file says the last word on who serves.
  const opening = openOwnerFromConfig(config, logger);
  opening.catch(() => undefined); // read below on every path
  let owner: WarehouseOwner | Promise<WarehouseOwner> = opening;
  let polls: boolean;
  try {
    polls = await warehouseWorkerPolls(options.client, queue);
  } catch (err) {
    await opening.then((o) => o.close()).catch(() => undefined);
    throw err;
  }
  if (polls) {
    const opened = await opening.catch((err: unknown) => {
      if (err instanceof WarehouseOwnedError) return undefined;
      throw err;
    });
    if (!opened) {
      logger.info({ taskQueue: queue }, 'a warehouse worker is running; using it');
      return await fn();
    }
    owner = opened;
    logger.info({ taskQueue: queue }, 'the warehouse worker that polled last is gone; serving its runs here');
  }
  // This process now serves the runs, backfills included: the same heap policy as `crmsync worker`.
  limitHeapGrowth(config.workerHeapGrowthPercent);
  const abort = new AbortController();
  // Without a live poller the file is opening still: the workflow worker is created meanwhile.
  const workers = runComposedWorkers({ config, logger, nativeConnection, namespace: options.namespace, signal: abort.signal, owner });
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
