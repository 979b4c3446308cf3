import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CrmsyncError } from '../errors.js';
import { isProcessAlive } from '../process-alive.js';

/**
 * Serializes starting the background worker between commands sharing a data directory, as
 * withEmbeddedServerLock does for the server: two syncs started together start one worker. The
 * lock holds the holder's pid; a lock whose holder died is taken over.
 */
export async function withBackgroundWorkerLock<T>(dataDir: string, fn: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  const lockFile = join(dataDir, 'worker.lock');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const handle = await open(lockFile, 'wx').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return undefined;
      throw err;
    });
    if (handle) {
      try {
        await handle.writeFile(String(process.pid));
      } finally {
        await handle.close();
      }
      try {
        return await fn();
      } finally {
        await rm(lockFile, { force: true });
      }
    }
    const holder = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && !isProcessAlive(holder)) {
      await rm(lockFile, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CrmsyncError(
        'WORKER_LOCKED',
        `Another crmsync process (pid ${holder || 'unknown'}) has been starting the background worker for ${timeoutMs / 1000}s; ` +
          `wait for it, or delete ${lockFile} if no crmsync process is running.`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
