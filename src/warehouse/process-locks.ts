import { resolve } from 'node:path';

/**
 * In-process exclusion per DuckDB file. This is deliberately process-wide state: DuckDB itself
 * forbids two instances of one file in a process, so every caller must share the same gate.
 */
const gates = new Map<string, Promise<void>>();
const writers = new Map<string, number>();

export interface ProcessLock {
  release(): void;
}

/** Waits (FIFO) for earlier writers of `dbPath` in this process; false when `timeoutMs` passes first. */
export async function acquireProcessLock(dbPath: string, timeoutMs: number): Promise<ProcessLock | null> {
  const key = resolve(dbPath);
  const previous = gates.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const chained = previous.then(() => mine);
  gates.set(key, chained);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
  const outcome = await Promise.race([previous.then(() => 'ok' as const), timedOut]);
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
  writers.set(key, (writers.get(key) ?? 0) + 1);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      writers.set(key, (writers.get(key) ?? 1) - 1);
      if (writers.get(key) === 0) writers.delete(key);
      done();
    },
  };
}

/** True while a writer scope of this process holds `dbPath`. */
export function isWriterActive(dbPath: string): boolean {
  return (writers.get(resolve(dbPath)) ?? 0) > 0;
}
