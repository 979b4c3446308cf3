import type { OpenWarehouse, WarehouseSession } from './warehouse-port.js';

export interface WriteQueue {
  /** Runs `job` inside a write scope, after every job queued before it; resolves with its result. */
  run<T>(job: (w: WarehouseSession) => Promise<T>): Promise<T>;
  /** Jobs waiting or running. */
  readonly pending: number;
}

export interface WriteQueueOptions {
  /**
   * How long an open scope waits for the next job once the queue is empty before it checkpoints
   * and releases the file (default 250 ms). A backfill's pages arrive closer together than this,
   * so one scope serves many of them; an idle worker gives the file back almost at once.
   */
  lingerMs?: number;
  /**
   * The longest one scope holds the file while jobs keep coming (default 30 s). Then it
   * checkpoints and closes, so another writer (the webhook receiver) or an analyst's query gets a
   * turn at the file even if it did not ask for one (`yieldWhen` serves those that do, after the
   * current job). With 10 s the closing checkpoint (about 1 s at 100k contacts) fell in the
   * middle of a 100k backfill's last steps.
   */
  maxHoldMs?: number;
  /**
   * True when another process or scope waits for the file (see src/warehouse/turn-requests.ts):
   * the open scope then ends after its current job, and the next one waits (up to 2 s) until the
   * request is gone, so an analyst's query or the webhook applier waits about one job, not a hold.
   */
  yieldWhen?: () => boolean;
}

/** After giving the file to a waiting process: how long to stay away at most, and how often to look. */
const YIELD_WAIT_MS = 2_000;
const YIELD_POLL_MS = 50;

interface QueuedJob {
  job: (w: WarehouseSession) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Serializes every write of this process through one DuckDB writer. A scope, once open, serves
 * every job that arrives while it runs or within `lingerMs` of the last one, up to `maxHoldMs`:
 * opening, migrating, checkpointing and closing the file cost far more than a page's load
 * (measured in a 100k-contact backfill: 34 scopes spent 7.7 s there against 6 s loading), and
 * each job's writes are committed (in DuckDB's WAL) when the job resolves, not at the checkpoint.
 */
export function createWriteQueue(open: OpenWarehouse, options: WriteQueueOptions = {}): WriteQueue {
  const lingerMs = options.lingerMs ?? 250;
  const maxHoldMs = options.maxHoldMs ?? 30_000;
  const yieldWhen = options.yieldWhen ?? (() => false);
  const queue: QueuedJob[] = [];
  let draining = false;
  let wake: (() => void) | undefined;

  /** Resolves when a job is queued or `ms` passed, whichever is first. */
  function nextJob(ms: number): Promise<void> {
    if (queue.length > 0 || ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });
  }

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.length > 0) {
        if (yieldWhen()) {
          const until = Date.now() + YIELD_WAIT_MS;
          while (yieldWhen() && Date.now() < until) await new Promise((r) => setTimeout(r, YIELD_POLL_MS));
        }
        let opened = false;
        try {
          await open(true, async (w) => {
            opened = true;
            const openedAt = Date.now();
            for (;;) {
              const item = queue.shift();
              if (!item) {
                // Idle: linger for the next job, looking for turn requests meanwhile.
                const lingerEnd = Math.min(Date.now() + lingerMs, openedAt + maxHoldMs);
                while (queue.length === 0 && Date.now() < lingerEnd && !yieldWhen()) {
                  await nextJob(Math.min(lingerEnd - Date.now(), YIELD_POLL_MS));
                }
                if (queue.length === 0 || Date.now() - openedAt >= maxHoldMs || yieldWhen()) return;
                continue;
              }
              try {
                item.resolve(await item.job(w));
              } catch (err) {
                item.reject(err);
              }
              if (Date.now() - openedAt >= maxHoldMs || yieldWhen()) return;
            }
          });
        } catch (err) {
          // The open failed: fail what is waiting rather than retry an open that may never work
          // (callers, activities, retry). A failed checkpoint or close after the jobs ran changes
          // nothing they were told (their writes were committed); later jobs get a fresh scope.
          if (!opened) for (const item of queue.splice(0)) item.reject(err);
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
        if (wake) wake();
        // drain() settles every job's own promise; an error outside a job still reaches this caller.
        else if (!draining) drain().catch(reject);
      });
    },
    get pending() {
      return queue.length + (draining ? 1 : 0);
    },
  };
}
