import { vi } from 'vitest';

/**
 * Simulated time for timing tests: vitest's fake timers drive setTimeout and Date.now, so a test
 * of rates and pauses gives the same answer on an idle machine and on one with a load of 20.
 * Call `vi.useRealTimers()` in afterEach.
 */
export interface FakeClock {
  /** Milliseconds since the clock started; pass it to `createRateLimiter({ now })`. */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Advances simulated time until `work` settles (at most `maxMs`), then returns its result. */
  run<T>(work: Promise<T>, maxMs: number): Promise<T>;
}

export function useFakeClock(): FakeClock {
  vi.useFakeTimers({ now: 0 });
  return {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    async run(work, maxMs) {
      let settled = false;
      const done = (): void => {
        settled = true;
      };
      work.then(done, done);
      const end = Date.now() + maxMs;
      // Time moves only to the next timer, so code that is ready now runs at the same instant.
      for (;;) {
        for (let i = 0; i < 20 && !settled; i++) await Promise.resolve();
        if (settled) break;
        if (vi.getTimerCount() === 0) throw new Error('nothing is scheduled but the work is not done: it waits for something that never comes');
        if (Date.now() >= end) throw new Error(`still running after ${maxMs} simulated ms`);
        await vi.advanceTimersToNextTimerAsync();
      }
      return work;
    },
  };
}
