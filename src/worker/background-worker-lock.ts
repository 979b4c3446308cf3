import { join } from 'node:path';
import { CrmsyncError } from '../errors.js';
import { withPidLock } from '../process-lock.js';

/**
 * Serializes starting the background worker between commands sharing a data directory, as
 * withEmbeddedServerLock does for the server: two syncs started together start one worker.
 */
export async function withBackgroundWorkerLock<T>(dataDir: string, fn: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  const lockFile = join(dataDir, 'worker.lock');
  return await withPidLock(lockFile, fn, {
    timeoutMs,
    pollMs: 100,
    timedOut: (holder) =>
      new CrmsyncError(
        'WORKER_LOCKED',
        `Another crmsync process (pid ${holder ?? 'unknown'}) has been starting the background worker for ${timeoutMs / 1000}s; ` +
          `wait for it, or delete ${lockFile} if no crmsync process is running.`,
      ),
  });
}
