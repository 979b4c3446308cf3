import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { sizeBytes } from '../size-bytes.js';
import { checkpointUnderLimit } from './checkpoint-under-limit.js';
import type { WarehouseHandle } from './duckdb-warehouse.js';
import { WarehouseLockedError, WarehouseOwnedError, WarehouseOwnerClosedError } from './errors.js';
import { openWarehouse, WRITER_CHECKPOINT_THRESHOLD, WRITER_ROW_GROUP_SIZE, type OpenWarehouseOptions } from './open-warehouse.js';
import { readMemoryFigures } from './read-memory-figures.js';

export interface WarehouseOwnerOptions extends Omit<OpenWarehouseOptions, 'readOnly'> {
  /** DuckDB memory limit for the writer (e.g. '1GB'): it spills to disk rather than take the machine. */
  memoryLimit?: string;
  /** DuckDB threads for the writer: fewer need less memory. */
  threads?: number;
  /**
   * The owner checkpoints after a job that left the write-ahead log past this (e.g. '64MB'; default
   * the writer's, WRITER_CHECKPOINT_THRESHOLD). Rows written since the last checkpoint stay in
   * DuckDB's memory (or its temp directory).
   */
  checkpointThreshold?: string;
  /**
   * The memory limit the owner's checkpoints run under (default half of `memoryLimit`; none
   * without a `memoryLimit`). See checkpoint-under-limit.ts.
   */
  checkpointMemoryLimit?: string;
  /**
   * The owner also checkpoints after a job once its loads appended this many rows to `contacts`
   * since the last checkpoint (default CHECKPOINT_GROWTH_ROWS); `false`: the write-ahead log alone
   * decides.
   */
  checkpointGrowthRows?: number | false;
  /** Turns a job's error into the one its caller should see (e.g. an out-of-memory into one naming the setting). */
  describeError?: (err: unknown) => unknown;
}

/** The one writer of a DuckDB file: every write of the process is a job run here, one after another. */
export interface WarehouseOwner {
  readonly dbPath: string;
  /** Runs `job` after every job queued before it; resolves with its result. */
  run<T>(job: (w: WarehouseHandle) => Promise<T>): Promise<T>;
  /** Jobs waiting or running. */
  readonly pending: number;
  /** Waits for queued jobs, checkpoints and closes the file. Later jobs are refused. */
  close(): Promise<void>;
}

/**
 * Files this process holds for writing (an owner, or a one-shot scope of withWarehouse). DuckDB's
 * file lock does not stop a second instance of the same process from opening a file, and two
 * writers of one file corrupt it: this set is what stops them.
 */
const held = new Set<string>();

/** Marks `dbPath` held by this process; null when it is already. Call the result to let go. */
export function holdHere(dbPath: string): (() => void) | null {
  const key = resolve(dbPath);
  if (held.has(key)) return null;
  held.add(key);
  return () => held.delete(key);
}

/**
 * Rows appended to `contacts` after which the owner checkpoints: a row group's worth (the
 * writer's WRITER_ROW_GROUP_SIZE) less one load of the sink (5,000 rows) and a little room. A
 * checkpoint writes the rows appended since the last one as row groups of their own, and joins
 * adjacent row groups that fit in fewer: rows between checkpoints of more than half a row group
 * and at most one are written once, while other spacings rewrite the last checkpoint's partial
 * group at the next, and the write-ahead log's size alone spaced them by the size of the rows
 * (bench/results/notes.md, "checkpoints a row group apart").
 */
export const CHECKPOINT_GROWTH_ROWS = WRITER_ROW_GROUP_SIZE - 5_120;

/** A size such as '256MB' with anything else dropped, to be spliced into a SET statement. */
function byteSize(v: string): string {
  return v.replace(/[^0-9A-Za-z. ]/g, '');
}

/**
 * DuckDB's own checkpoint_threshold for an owner: never reached, so that no COMMIT checkpoints
 * (inside a job, at the writer's full memory limit) and the owner's own step does it instead.
 */
const NEVER = '1000GB';

/** Half of a size such as '128MB', in KB ('64000KB'). */
function half(size: string): string {
  return `${Math.floor(sizeBytes(size) / 2 / 1000)}KB`;
}

/**
 * Opens `dbPath` for writing once and migrates it once; the owner then holds it until `close`.
 * Another process holding the file is a WarehouseOwnedError, at once: there is no waiting for a
 * turn, because the only writer is the warehouse worker and a second one is a deployment mistake.
 */
export async function openWarehouseOwner(opts: WarehouseOwnerOptions): Promise<WarehouseOwner> {
  const release = holdHere(opts.dbPath);
  if (!release) throw new WarehouseOwnedError(opts.dbPath, 'this process');
  const threads = opts.threads;
  const thresholdBytes = sizeBytes(opts.checkpointThreshold ?? WRITER_CHECKPOINT_THRESHOLD);
  const normalLimit = opts.memoryLimit ? byteSize(opts.memoryLimit) : undefined;
  const loweredLimit = opts.checkpointMemoryLimit ? byteSize(opts.checkpointMemoryLimit) : normalLimit ? half(normalLimit) : undefined;
  if (threads !== undefined && !(Number.isSafeInteger(threads) && threads > 0)) throw new RangeError(`threads must be a positive integer, got ${threads}`);
  let handle: WarehouseHandle;
  try {
    handle = await openWarehouse({ ...opts, readOnly: false });
  } catch (err) {
    release();
    if (err instanceof WarehouseLockedError) throw new WarehouseOwnedError(opts.dbPath, 'another process', { cause: err.cause });
    throw err;
  }
  try {
    if (threads !== undefined) await handle.connection.run(`SET threads = ${threads}`);
    if (normalLimit) await handle.connection.run(`SET memory_limit = '${normalLimit}'`);
    await handle.connection.run(`SET checkpoint_threshold = '${NEVER}'`);
    await handle.migrate();
  } catch (err) {
    await handle.close();
    release();
    throw err;
  }
  const describe = opts.describeError ?? ((err: unknown) => err);
  const logger = opts.logger;
  // At debug level each job is followed by where the memory is (the V8 heap or DuckDB), so a
  // backfill's peak can be explained from the log (CRMSYNC_LOG_LEVEL=debug).
  const probe = logger?.isLevelEnabled('debug') === true ? async (): Promise<void> => logger.debug({ memory: await readMemoryFigures(handle.connection) }, 'warehouse memory') : undefined;
  const walPath = opts.dbPath === ':memory:' ? undefined : `${opts.dbPath}.wal`;
  const growthRows = opts.checkpointGrowthRows === false ? Infinity : (opts.checkpointGrowthRows ?? CHECKPOINT_GROWTH_ROWS);
  // Counted by the handle's loads, not asked of DuckDB: its catalog's row count cost 8 ms a job
  // at 1M contacts.
  let appendedAtCheckpoint = 0;
  const checkpoint = async (): Promise<void> => {
    // Not while lake buckets are published beside the writer: the two at once made a 1M
    // backfill's largest resident sets, 15-25 MB over the rest (bench/results/notes.md, "a typed
    // batch loaded in place"); and the publish's read transaction has ended when it runs.
    await handle.publishAsideEnded();
    const started = process.hrtime.bigint();
    const appended = handle.contactsAppended;
    const how = await checkpointUnderLimit(handle.connection, {
      ...(normalLimit ? { normal: normalLimit } : {}),
      ...(loweredLimit ? { lowered: loweredLimit } : {}),
      reattach: () => handle.reattach(),
    });
    appendedAtCheckpoint = appended;
    logger?.debug({ limit: how === 'lowered' ? loweredLimit : (normalLimit ?? 'default'), ms: Number((process.hrtime.bigint() - started) / 1_000_000n) }, 'warehouse checkpoint');
  };
  // After a job: a checkpoint once the write-ahead log has passed the threshold, or once the loads
  // appended growthRows to contacts since the last one. A checkpoint that fails leaves the
  // committed rows in the log (the next one tries again): it must not stop the queue.
  const checkpointIfDue = async (): Promise<void> => {
    if (!walPath) return;
    const wal = await stat(walPath).then(
      (s) => s.size,
      () => 0,
    );
    if (wal === 0) return;
    if (wal < thresholdBytes && handle.contactsAppended - appendedAtCheckpoint < growthRows) return;
    try {
      await checkpoint();
    } catch (err) {
      logger?.warn({ err, walBytes: wal }, 'warehouse checkpoint failed; the write-ahead log keeps the rows, the next job tries again');
    }
    await probe?.().catch(() => undefined);
  };
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  let closing: Promise<void> | undefined;
  return {
    dbPath: opts.dbPath,
    run<T>(job: (w: WarehouseHandle) => Promise<T>): Promise<T> {
      if (closing) return Promise.reject(new WarehouseOwnerClosedError(opts.dbPath));
      pending++;
      const result = tail
        .then(() => job(handle))
        .finally(async () => {
          pending--;
          await probe?.().catch(() => undefined);
        });
      // The next job starts when this one settles, whatever its outcome, and after the checkpoint it may call for.
      tail = result.catch(() => undefined).then(checkpointIfDue);
      return result.catch((err: unknown) => {
        throw describe(err);
      });
    },
    get pending() {
      return pending;
    },
    close(): Promise<void> {
      closing ??= (async () => {
        await tail;
        try {
          await checkpoint();
        } finally {
          await handle.close();
          release();
        }
      })();
      return closing;
    },
  };
}
