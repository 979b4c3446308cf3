import { setFlagsFromString } from 'node:v8';

/**
 * Makes V8 collect the old generation once it has grown `percent` past what the last full
 * collection kept, instead of V8's own factor (up to 4x on a machine with memory to spare).
 *
 * A backfill makes the worker's heap churn: each page's contacts live until their load, long
 * enough to reach the old generation, and are garbage right after. Under V8's own factor that
 * garbage piled up to the largest share of the worker's peak (bench/backfill.ts with
 * BENCH_MEMORY_PROBE=1). Unlike a heap cap (`--max-old-space-size`), this never stops the
 * process: a larger live set only means a larger heap. V8 reads the flag at every collection,
 * so setting it at start works (the flag is not allowed in NODE_OPTIONS). 0 leaves V8's own.
 */
export function limitHeapGrowth(percent: number): void {
  if (!Number.isSafeInteger(percent) || percent < 0) throw new RangeError(`heap growth must be a whole number of percent, 0 or more, got ${percent}`);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
