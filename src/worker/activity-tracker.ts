/**
 * Counts the activities a worker runs, to tell when it has been idle: a background worker stops
 * once no activity ran for its idle period. Every activity of crmsync runs on the warehouse queue
 * (the main queue has workflows only), so wrapping those sees all the work.
 */
export interface ActivityTracker {
  wrap<A extends object>(activities: A): A;
  /** Milliseconds since the last activity ended (or the activities were wrapped); 0 while one runs. */
  idleForMs(): number;
}

export function createActivityTracker(now: () => number = Date.now): ActivityTracker {
  let running = 0;
  let lastAt = now();
  return {
    wrap<A extends object>(activities: A): A {
      // Wrapped just before the warehouse worker polls: the idle time counts from there, so a
      // start slowed by a loaded machine (bundling, opening DuckDB) is not taken for idleness.
      lastAt = now();
      const wrapped: Record<string, unknown> = {};
      for (const [name, fn] of Object.entries(activities)) {
        if (typeof fn !== 'function') {
          wrapped[name] = fn;
          continue;
        }
        wrapped[name] = async (...args: unknown[]) => {
          running++;
          try {
            return (await (fn as (...a: unknown[]) => unknown)(...args)) as unknown;
          } finally {
            running--;
            lastAt = now();
          }
        };
      }
      return wrapped as A;
    },
    idleForMs: () => (running > 0 ? 0 : Math.max(0, now() - lastAt)),
  };
}
