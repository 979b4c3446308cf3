import { join } from 'node:path';
import { TemporalDevServerError } from './errors.js';
import { withPidLock } from '../process-lock.js';

/**
 * Serializes starting the embedded dev server between crmsync processes sharing a data
 * directory: two commands launched together must not both open `temporal.sqlite` with a server
 * of their own.
 */
export async function withEmbeddedServerLock<T>(dataDir: string, fn: () => Promise<T>, timeoutMs = 120_000, pollMs = 200): Promise<T> {
  const lockFile = join(dataDir, 'temporal-dev-server.lock');
  return await withPidLock(lockFile, fn, {
    timeoutMs,
    pollMs,
    timedOut: (holder) =>
      new TemporalDevServerError(
        `Another crmsync process (pid ${holder ?? 'unknown'}) has been starting the embedded Temporal for ${timeoutMs / 1000}s; ` +
          `wait for it, or delete ${lockFile} if no crmsync process is running.`,
      ),
  });
}
