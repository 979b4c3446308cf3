import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Config } from '../config.js';
import { TemporalCliMissingError } from './errors.js';

export const TEMPORAL_CLI_VERSION = '1.5.1';

export interface LocateCliOptions {
  /** TEMPORAL_CLI_PATH */
  cliPath?: string | undefined;
  /** XDG_CACHE_HOME; ~/.cache when unset */
  cacheRoot?: string | undefined;
  /** PATH */
  searchPath?: string | undefined;
}

export interface LocatedCli {
  path: string;
  source: 'TEMPORAL_CLI_PATH' | 'cache' | 'PATH';
}

/** Where scripts/setup-temporal.mjs caches the binary it builds. */
export function temporalCliCacheDir(cacheRoot: string | undefined): string {
  return join(cacheRoot || join(homedir(), '.cache'), 'crmsync', `temporal-v${TEMPORAL_CLI_VERSION}`);
}

/**
 * Finds the Temporal CLI in the same order as scripts/setup-temporal.mjs (which can also build
 * it): TEMPORAL_CLI_PATH, the cache, then PATH. Runtime never builds: that takes minutes.
 */
export function locateTemporalCli(options: LocateCliOptions): LocatedCli {
  if (options.cliPath) {
    if (!isExecutable(options.cliPath)) {
      throw new TemporalCliMissingError(`TEMPORAL_CLI_PATH=${options.cliPath} is not an executable file; fix the path or unset it to use the cached build.`);
    }
    return { path: options.cliPath, source: 'TEMPORAL_CLI_PATH' };
  }
  const cached = join(temporalCliCacheDir(options.cacheRoot), 'temporal');
  if (isExecutable(cached)) return { path: cached, source: 'cache' };
  for (const dir of (options.searchPath ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'temporal');
    if (isExecutable(candidate)) return { path: candidate, source: 'PATH' };
  }
  throw new TemporalCliMissingError(
    'No Temporal CLI found: run `npm run setup` (builds it with Go into the cache), set TEMPORAL_CLI_PATH, ' + 'or set TEMPORAL_ADDRESS to use a running Temporal instead of the embedded one.',
  );
}

export function locateTemporalCliFromConfig(config: Pick<Config, 'temporal'>): LocatedCli {
  return locateTemporalCli({
    cliPath: config.temporal.cliPath,
    cacheRoot: config.temporal.cliCacheRoot,
    searchPath: config.temporal.searchPath,
  });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
