import type { OpenWarehouse, WarehouseSession } from './warehouse-port.js';

export interface WriteQueue {
  /** Runs `job` inside a write scope, after every job queued before it; resolves with its result. */
  run<T>(job: (w: WarehouseSession) => Promise<T>): Promise<T>;
  /** Jobs waiting or running. */
  readonly pending: number;
}

interface QueuedJob {
  job: (w: WarehouseSession) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Serializes every write of this process through one DuckDB writer. Jobs that queue up while a
 * scope is open share the next scope, so under load many pages are loaded per open of the file,
 * and when idle a single page is loaded at once. Readers elsewhere only wait for one batch.
 */
export function createWriteQueue(open: OpenWarehouse, options: { maxJobsPerScope?: number } = {}): WriteQueue {
  const maxJobs = options.maxJobsPerScope ?? 64;
  const queue: QueuedJob[] = [];
  let draining = false;

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, maxJobs);
        let settled = 0;
        try {
          await open(true, async (w) => {
            for (const item of batch) {
              try {
                item.resolve(await item.job(w));
              } catch (err) {
                item.reject(err);
              }
              settled++;
            }
          });
        } catch (err) {
          // Opening or closing the scope failed: every job not yet settled fails with it.
          for (const item of batch.slice(settled)) item.reject(err);
        }
      }
    } finally {
      draining = false;
    }
  }

  return {
    run<T>(job: (w: WarehouseSession) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ job, resolve: resolve as (v: unknown) => void, reject });
        if (!draining) void drain();
      });
    },
    get pending() {
      return queue.length + (draining ? 1 : 0);
    },
  };
}
