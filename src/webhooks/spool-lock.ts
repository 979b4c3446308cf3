import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpoolUnavailableError } from './errors.js';
import { isProcessAlive } from '../process-alive.js';

/**
 * One receiver per spool directory: two appenders would interleave frames. The lock holds the
 * owner's pid; a lock left by a killed process (pid gone) is taken over.
 */
export function acquireSpoolLock(dir: string): () => void {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new SpoolUnavailableError(`Cannot create the spool lock in ${dir}; check that the directory is writable.`, { cause: err });
      }
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid)) {
        throw new SpoolUnavailableError(`Another webhook receiver (pid ${pid}) is using the spool ${dir}; stop it or set a different CRMSYNC_DATA_DIR.`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new SpoolUnavailableError(`Cannot take the spool lock in ${dir}; remove ${path} if no receiver is running.`);
}
