import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TemporalDevServerError } from './errors.js';
import { isProcessAlive } from '../process-alive.js';

/**
 * Serializes starting the embedded dev server between crmsync processes sharing a data
 * directory: two commands launched together must not both open `temporal.sqlite` with a server
 * of their own. The lock holds the holder's pid; a lock whose holder died is taken over.
 */
export async function withEmbeddedServerLock<T>(dataDir: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const lockFile = join(dataDir, 'temporal-dev-server.lock');
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
      throw new TemporalDevServerError(
        `Another crmsync process (pid ${holder || 'unknown'}) has been starting the embedded Temporal for ${timeoutMs / 1000}s; ` +
          `wait for it, or delete ${lockFile} if no crmsync process is running.`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
