import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { SyncMemoryLimitError } from '../sync/sync-errors.js';
import { openWarehouseOwner, type WarehouseOwner } from '../warehouse/index.js';

/**
 * The configured DuckDB file's owner. It runs under a memory limit (without one DuckDB may take
 * most of the machine for a large merge; with one it spills to disk), on `syncThreads` DuckDB
 * threads, and checkpoints every `syncCheckpointThreshold` of write-ahead log (config derives
 * all three); running out of the limit is an error naming the setting to raise.
 */
export async function openOwnerFromConfig(
  config: Pick<Config, 'dbPath' | 'lakePath'> & {
    catalogPath?: string;
    syncMemoryLimit?: string;
    syncThreads?: number | undefined;
    syncCheckpointThreshold?: string | undefined;
    crm?: { timezone?: string };
  },
  logger?: Logger,
): Promise<WarehouseOwner> {
  const limit = config.syncMemoryLimit;
  return await openWarehouseOwner({
    dbPath: config.dbPath,
    lakePath: config.lakePath,
    ...(config.catalogPath ? { catalogPath: config.catalogPath } : {}),
    ...(logger ? { logger } : {}),
    ...(config.crm?.timezone ? { siteTimeZone: config.crm.timezone } : {}),
    ...(limit ? { memoryLimit: limit } : {}),
    ...(config.syncThreads !== undefined ? { threads: config.syncThreads } : {}),
    ...(config.syncCheckpointThreshold ? { checkpointThreshold: config.syncCheckpointThreshold } : {}),
    describeError: (err) =>
      // DuckDB's own advice names SQL settings; a user sets the environment variable.
      limit && err instanceof Error && err.message.startsWith('Out of Memory Error') ? new SyncMemoryLimitError(limit, { cause: err }) : err,
  });
}
