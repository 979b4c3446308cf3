import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { createActivities, createWarehouseActivities } from '../../activities/index.js';
import { createSyncActivities } from '../../activities/sync-activities.js';
import type { Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import type { Logger } from '../logger.js';
import { taskQueues } from '../temporal/task-queues.js';
import { turnRequested, withWarehouse } from '../warehouse/index.js';
import type { SyncCrmClient } from './crm-port.js';
import { runSyncWorkers } from './run-sync-workers.js';
import { SyncMemoryLimitError } from './sync-errors.js';
import type { OpenWarehouse } from './warehouse-port.js';
import { createWriteQueue, type WriteQueue } from './write-queue.js';

/** Warehouse-queue activities at once: parallel page ranges of contacts plus the small streams. */
export const DEFAULT_WAREHOUSE_CONCURRENCY = 12;

/**
 * Opens the configured warehouse for one scope (the writer holds the file only inside it). Write
 * scopes get a DuckDB memory limit: without one DuckDB may take most of the machine's memory for
 * a large merge; with one it spills to disk, and the worker's footprint stays bounded. With
 * `syncThreads`, they also run on that many DuckDB threads: fewer need less memory, and with one
 * a 128MB limit held through every lake publish measured (docs/sync.md, low-memory settings).
 */
export function warehouseOpener(config: Pick<Config, 'dbPath' | 'lakePath'> & { catalogPath?: string; syncMemoryLimit?: string; syncThreads?: number }): OpenWarehouse {
  const limit = config.syncMemoryLimit;
  const threads = config.syncThreads;
  if (threads !== undefined && !(Number.isSafeInteger(threads) && threads > 0)) throw new RangeError(`syncThreads must be a positive integer, got ${threads}`);
  return (write, fn) =>
    withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, ...(config.catalogPath ? { catalogPath: config.catalogPath } : {}), write }, async (w) => {
      if (!write) return await fn(w);
      if (threads !== undefined) await w.connection.run(`SET threads = ${threads}`);
      if (!limit) return await fn(w);
      await w.connection.run(`SET memory_limit = '${limit.replace(/[^0-9A-Za-z. ]/g, '')}'`);
      try {
        return await fn(w);
      } catch (err) {
        // DuckDB's own advice names SQL settings; a user sets the environment variable.
        if (err instanceof Error && err.message.startsWith('Out of Memory Error')) throw new SyncMemoryLimitError(limit, { cause: err });
        throw err;
      }
    });
}

export interface SyncRuntime {
  client: SyncCrmClient;
  writes: WriteQueue;
  /** CRMSYNC_PUBLISH_EVERY, read by the activities (0: no publishes during a run). */
  publishEveryMs: number;
  /** Closes the CRM client's connections. */
  close(): Promise<void>;
}

/** The CRM client from configuration (credentials stay in this process) and the one write queue. */
export function createSyncRuntime(config: Config): SyncRuntime {
  const client = crmClientFromConfig(config);
  const writes = createWriteQueue(warehouseOpener(config), { yieldWhen: () => turnRequested(config.dbPath) });
  return { client, writes, publishEveryMs: config.publishEveryMs, close: () => client.close() };
}

/**
 * Runs this process's workers (every area's activities, sync's on the warehouse queue) while
 * `fn` runs, then drains them. Used by `crmsync sync` and `crmsync demo` in embedded mode.
 */
export async function withInProcessWorkers<T>(
  options: { config: Config; logger: Logger; client: Client; nativeConnection: NativeConnection; namespace: string; runtime?: SyncRuntime },
  fn: () => Promise<T>,
): Promise<T> {
  const { config, logger } = options;
  const runtime = options.runtime ?? createSyncRuntime(config);
  const abort = new AbortController();
  const base = { config, logger };
  const workers = runSyncWorkers({
    nativeConnection: options.nativeConnection,
    namespace: options.namespace,
    taskQueues: taskQueues(config),
    activities: createActivities(base),
    warehouseActivities: { ...createWarehouseActivities(base), ...createSyncActivities({ ...runtime, logger }) },
    warehouseConcurrency: DEFAULT_WAREHOUSE_CONCURRENCY,
    signal: abort.signal,
    logger,
  });
  // A worker that dies (bad bundle, lost connection) must fail `fn` rather than leave it waiting.
  const failed = workers.then(
    () => new Promise<never>(() => undefined),
    (err: unknown) => Promise.reject(err),
  );
  try {
    return await Promise.race([fn(), failed]);
  } finally {
    abort.abort();
    await workers.catch((err: unknown) => logger.debug({ err }, 'worker stopped with an error'));
  }
}
