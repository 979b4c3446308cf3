import type { DuckDBConnection } from '@duckdb/node-api';
import { run } from './sql-run.js';

export interface CheckpointLimits {
  /** The writer's memory limit, restored after the checkpoint whatever happens (e.g. '128MB'); none: DuckDB's own. */
  normal?: string;
  /** The limit the checkpoint runs under; none: the normal one. Needs `normal`. */
  lowered?: string;
  /** Detaches and attaches the file again, after a checkpoint that failed invalidated it. */
  reattach: () => Promise<void>;
}

/** How the checkpoint went: under the lowered limit, or at the normal one after the lowered did not fit. */
export type CheckpointOutcome = 'lowered' | 'normal';

/**
 * CHECKPOINT under a lowered memory limit. The checkpoint compresses the rows the write-ahead log
 * holds, and at the writer's limit DuckDB's allocator grows well past what DuckDB accounts for;
 * under a lower one DuckDB first spills those rows to its temp directory and the compression
 * reuses the memory they leave (bench/results/notes.md, "Issue 19, DuckDB's memory at a
 * checkpoint"). When the lower limit does not fit (DuckDB cannot free enough to set it, or the
 * checkpoint runs out), the checkpoint runs again at the normal limit; a checkpoint that failed
 * leaves the database invalidated, so the file is attached again first (its write-ahead log
 * replays: nothing committed is lost).
 */
export async function checkpointUnderLimit(connection: DuckDBConnection, limits: CheckpointLimits): Promise<CheckpointOutcome> {
  if (limits.lowered && limits.normal) {
    try {
      await run(connection, `SET memory_limit = '${limits.lowered}'`);
      await run(connection, 'CHECKPOINT');
      return 'lowered';
    } catch (err) {
      // Whatever failed, an invalidated file is attached again, so that later jobs can write.
      if (isInvalidated(err)) await limitRestored(connection, limits.normal, limits.reattach);
      if (!isOutOfMemory(err)) throw err;
    } finally {
      await run(connection, `SET memory_limit = '${limits.normal}'`);
    }
  }
  try {
    await run(connection, 'CHECKPOINT');
  } catch (err) {
    // Attached again so that later jobs can write; the error still reaches the owner.
    if (isInvalidated(err)) await limitRestored(connection, limits.normal, limits.reattach);
    throw err;
  }
  return 'normal';
}

// Reattaching replays the write-ahead log: at the normal limit, not the lowered one.
async function limitRestored(connection: DuckDBConnection, normal: string | undefined, reattach: () => Promise<void>): Promise<void> {
  if (normal) await run(connection, `SET memory_limit = '${normal}'`);
  await reattach();
}

function isOutOfMemory(err: unknown): boolean {
  return err instanceof Error && /Out of Memory Error|could not allocate block/.test(err.message);
}

function isInvalidated(err: unknown): boolean {
  return err instanceof Error && /has been invalidated/.test(err.message);
}
