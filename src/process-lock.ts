import { randomBytes } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { isProcessAlive } from './process-alive.js';

export interface PidLockOptions {
  timeoutMs: number;
  pollMs?: number;
  /** The error to throw when the lock is still held at the deadline; `holder` is its pid if known. */
  timedOut: (holder: number | undefined) => Error;
}

/**
 * Runs `fn` holding `lockFile`, a file naming the holder (pid and a token), so that crmsync
 * processes sharing a data directory take turns (starting the embedded server, starting the
 * background worker). A lock whose holder died is taken over.
 */
export async function withPidLock<T>(lockFile: string, fn: () => Promise<T>, options: PidLockOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await createExclusive(lockFile)) {
      try {
        return await fn();
      } finally {
        await rm(lockFile, { force: true });
      }
    }
    const seen = await readFile(lockFile, 'utf8').catch(() => '');
    const holder = holderPid(seen);
    if (holder !== undefined && !isProcessAlive(holder)) {
      await removeStale(lockFile, seen);
      continue;
    }
    if (Date.now() > deadline) throw options.timedOut(holder);
    await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
  }
}

/**
 * Creates `file` holding this process's pid and a fresh token, or returns false when it exists.
 * The content is written to a file of our own first and linked into place, so the lock is never
 * seen empty or half-written.
 */
async function createExclusive(file: string): Promise<boolean> {
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(draft, `${process.pid} ${randomBytes(8).toString('hex')}\n`);
  try {
    await link(draft, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await rm(draft, { force: true });
  }
}

function holderPid(content: string): number | undefined {
  const pid = Number(content.trim().split(/\s+/)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Removes the lock a dead process left, if it is still the one seen. Two waiters can see the same
 * stale lock; without a guard the slower one would delete the lock the faster one has just taken
 * and both would go in. Removal therefore happens only under a second, short-lived lock,
 * after checking the content (pid and token) is still what was seen.
 */
async function removeStale(lockFile: string, seen: string): Promise<void> {
  const guard = `${lockFile}.takeover`;
  if (!(await createExclusive(guard))) {
    // Another waiter is removing it; a guard its dead holder left behind is removed in turn.
    const guardHolder = holderPid(await readFile(guard, 'utf8').catch(() => ''));
    if (guardHolder !== undefined && !isProcessAlive(guardHolder)) await rm(guard, { force: true });
    await new Promise((r) => setTimeout(r, 20));
    return;
  }
  try {
    const now = await readFile(lockFile, 'utf8').catch(() => undefined);
    if (now === seen) await rm(lockFile, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}
