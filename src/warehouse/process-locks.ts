import { resolve } from 'node:path';

/**
 * In-process exclusion per DuckDB file. This is deliberately process-wide state: DuckDB itself
 * forbids two instances of one file in a process, so every caller must share the same gate.
 */
const gates = new Map<string, Promise<void>>();
/** Scopes waiting for each file's gate. */
const waiting = new Map<string, number>();

/** True while some scope of this process waits for `dbPath`'s gate. */
export function hasProcessLockWaiters(dbPath: string): boolean {
  return (waiting.get(resolve(dbPath)) ?? 0) > 0;
}

export interface ProcessLock {
  release(): void;
}

/** Waits (FIFO) for earlier scopes on `dbPath` in this process; null when `timeoutMs` passes first. */
export async function acquireProcessLock(dbPath: string, timeoutMs: number): Promise<ProcessLock | null> {
  const key = resolve(dbPath);
  const previous = gates.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const chained = previous.then(() => mine);
  gates.set(key, chained);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
  waiting.set(key, (waiting.get(key) ?? 0) + 1);
  let outcome: 'ok' | 'timeout';
  try {
    outcome = await Promise.race([previous.then(() => 'ok' as const), timedOut]);
  } finally {
    const left = (waiting.get(key) ?? 1) - 1;
    if (left > 0) waiting.set(key, left);
    else waiting.delete(key);
  }
  clearTimeout(timer);
  const done = () => {
    release();
    if (gates.get(key) === chained) gates.delete(key);
  };
  if (outcome === 'timeout') {
    // Our slot must still pass on to later waiters once the earlier holder is done.
    done();
    return null;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      done();
    },
  };
}
