/**
 * Settings a worker process can only be given when it starts: glibc reads `MALLOC_ARENA_MAX`
 * before any code runs, and V8 sizes its young generation from its flags at start. Two glibc
 * arenas instead of one per thread that allocates (DuckDB's, Temporal core's, libuv's), and a
 * 4 MB young generation instead of V8's 32 MB, keep a 1M backfill's worker lower at no cost in
 * CPU the benches could see (bench/results/notes.md, "Issue 19, what the 1M peak is made of" and
 * "Issue 19, worker launch settings").
 */
export const WORKER_MALLOC_ARENA_MAX = '2';
export const WORKER_SEMI_SPACE_FLAG = '--max-semi-space-size=4';

/** Set to 0 (or false, off, no) to start `crmsync worker` as node was started, with neither setting. */
export const LAUNCH_DEFAULTS_OPT_OUT = 'CRMSYNC_WORKER_LAUNCH_DEFAULTS';

export interface WorkerLaunchSettings {
  /** Environment variables to add to the worker's. */
  env: Record<string, string>;
  /** Node flags to put before the script. */
  execArgv: string[];
}

/**
 * What a worker started with `env` and node's `execArgv` lacks of crmsync's launch settings, or
 * undefined when it lacks none: every one the user set (in the environment, NODE_OPTIONS or
 * node's own flags) is theirs, and the opt-out turns all of them off.
 */
export function missingWorkerLaunchSettings(env: NodeJS.ProcessEnv, execArgv: readonly string[]): WorkerLaunchSettings | undefined {
  if (/^(0|false|off|no)$/i.test(env[LAUNCH_DEFAULTS_OPT_OUT]?.trim() ?? '')) return undefined;
  const missing: WorkerLaunchSettings = { env: {}, execArgv: [] };
  if (env.MALLOC_ARENA_MAX === undefined) missing.env.MALLOC_ARENA_MAX = WORKER_MALLOC_ARENA_MAX;
  // V8 takes dashes or underscores in a flag's name.
  const semiSpace = /^--max[-_]semi[-_]space[-_]size(=|$)/;
  const nodeOptions = (env.NODE_OPTIONS ?? '').split(/\s+/);
  if (![...execArgv, ...nodeOptions].some((a) => semiSpace.test(a))) missing.execArgv.push(WORKER_SEMI_SPACE_FLAG);
  return Object.keys(missing.env).length > 0 || missing.execArgv.length > 0 ? missing : undefined;
}
