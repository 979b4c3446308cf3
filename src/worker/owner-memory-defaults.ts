import { availableParallelism, totalmem } from 'node:os';
import { sizeBytes } from '../size-bytes.js';

/** What the owner's defaults are derived from: the memory this process may use, and its cores. */
export interface Machine {
  memoryBytes: number;
  cores: number;
}

/** This machine: its memory, or the container's limit when that is lower, and its cores. */
export function thisMachine(): Machine {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return { memoryBytes: constrained > 0 && constrained < total ? constrained : total, cores: availableParallelism() };
}

const MB = 1_000_000;
/**
 * The owner's DuckDB memory limit at most. DuckDB's own default, 80% of the machine, let a
 * backfill take as much as its buffers could fill; its resident set also goes well past the
 * limit (query intermediates, checkpoints), more so the higher the limit. 128MB is the smallest
 * limit at which the lake publish of a 1M-contact backfill did not run out, with one thread
 * (bench/results/backfill.json, docs/sync.md).
 */
const MAX_LIMIT_MB = 128;
/** Small machines: a sixteenth of their memory, not less than this. */
const MIN_LIMIT_MB = 64;
/**
 * Each DuckDB thread needs its own working memory (hash tables, sorts, a Parquet row group in
 * flight): one thread per this much of the limit, so a raised limit brings its threads back.
 */
const MB_PER_THREAD = 128;

/**
 * The write-ahead log after which the owner checkpoints, when CRMSYNC_SYNC_CHECKPOINT_THRESHOLD is
 * unset. Once the owner's checkpoints ran under a lowered limit, the peak moved to the loads that
 * start from the rows a long log holds in memory: half the writer's 256MB lowers it, and the spill
 * to the temp directory, at some cost in worker CPU (more checkpoints of a growing table).
 * Figures: bench/results/notes.md, "Issue 19, the owner's own checkpoints".
 */
export const DEFAULT_CHECKPOINT_THRESHOLD = '128MB';

/** The memory limit when CRMSYNC_SYNC_MEMORY_LIMIT is unset, e.g. '128MB'. */
export function defaultSyncMemoryLimit(machine: Machine): string {
  const sixteenth = Math.floor(machine.memoryBytes / 16 / MB);
  return `${Math.min(MAX_LIMIT_MB, Math.max(MIN_LIMIT_MB, sixteenth))}MB`;
}

/** The DuckDB threads when CRMSYNC_SYNC_THREADS is unset: one per MB_PER_THREAD of `memoryLimit`, at most one per core. */
export function defaultSyncThreads(memoryLimit: string, machine: Machine): number {
  return Math.max(1, Math.min(machine.cores, Math.floor(sizeBytes(memoryLimit) / (MB_PER_THREAD * MB))));
}
