/**
 * The settings crmsync gives DuckDB's own allocator (the jemalloc inside its library, which reads
 * `DUCKDB_JE_MALLOC_CONF`). DuckDB sizes its arenas from the machine's cores (two on a 2-core
 * one), and a thread stays on the arena it was first given: Node runs DuckDB's queries on its
 * libuv pool, so the owner's jobs land on several arenas, and the pages one freed were not reused
 * by the next job on another but held for the decay time beside it. One arena lets every job
 * reuse them; the owner runs one job at a time, so the arena's lock is not contended
 * (bench/results/notes.md, "Issue 19, DuckDB's allocator arenas").
 */
export const DUCKDB_ALLOCATOR_DEFAULTS = 'narenas:1';

/**
 * Puts DUCKDB_ALLOCATOR_DEFAULTS in front of the user's `DUCKDB_JE_MALLOC_CONF`: jemalloc reads the
 * pairs left to right, so anything the user sets (`narenas:2`, a decay) still wins.
 *
 * jemalloc reads the variable once, at the library's first allocation: this must run before
 * `@duckdb/node-api` is imported (the CLI's entry does it first, and loads the rest after). It
 * writes the environment rather than reading config because the reader is native code.
 */
export function applyDuckdbAllocatorDefaults(env: NodeJS.ProcessEnv = process.env): void {
  const user = env.DUCKDB_JE_MALLOC_CONF?.trim() ?? '';
  // A background worker inherits the environment its command already completed.
  if (user === DUCKDB_ALLOCATOR_DEFAULTS || user.startsWith(`${DUCKDB_ALLOCATOR_DEFAULTS},`)) return;
  env.DUCKDB_JE_MALLOC_CONF = user ? `${DUCKDB_ALLOCATOR_DEFAULTS},${user}` : DUCKDB_ALLOCATOR_DEFAULTS;
}
