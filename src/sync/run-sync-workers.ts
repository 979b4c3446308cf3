import { runWorkers, type RunWorkersOptions } from '../temporal/worker.js';

export interface RunSyncWorkersOptions extends Omit<RunWorkersOptions, 'warehouseConcurrency' | 'workflowsPath'> {
  /**
   * Warehouse-queue activities running at once in this one process. Sync activities overlap
   * their CRM fetches but serialize every DuckDB write through the process's write queue, so
   * this stays one writer however high it is.
   */
  warehouseConcurrency: number;
}

/** runWorkers with the warehouse concurrency sync's parallel page ranges need stated explicitly. */
export async function runSyncWorkers(options: RunSyncWorkersOptions): Promise<void> {
  await runWorkers(options);
}
