import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../src/crm/index.js';
import { FaultInjector } from '../../src/simulator/faults.js';

/**
 * The limiter discovers a server's request limit it was not told about: a couple of 429s while it
 * probes, then it settles just under the limit. (The 2,000-upsert, 20 req/s figure is in the report.)
 *
 * On a virtual clock: the limiter's timers and clock, and the simulator's own rate-limit window
 * (its FaultInjector, the code that answers 429 over HTTP), all run on vitest's fake time, and
 * each request takes a fixed 25 virtual ms. The figures are the same on every run however busy
 * the machine is (on wall time, a load average of 5 made the tail rate miss its bound).
 */
describe('adaptive rate limit against the simulator’s rate limit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('approaches a 40 req/s limit without a 429 storm and settles just under it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: 1_000_000 });
    const LIMIT = 40;
    const N = 240;
    const LATENCY_MS = 25;
    const now = (): number => Date.now();
    const limiter = createRateLimiter({ maxConcurrency: 8, now });
    const server = new FaultInjector(21, { rateLimitRps: LIMIT }, now);
    const done: number[] = [];
    let status429 = 0;
    let next = 0;
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const worker = async (): Promise<void> => {
      while (next < N) {
        next++;
        for (;;) {
          const ticket = await limiter.acquire();
          const decision = server.decide('crmsync', false);
          await sleep(LATENCY_MS);
          if (decision.kind === 'rate_limited') {
            status429++;
            ticket.release({ kind: 'rateLimited', retryAfterMs: decision.retryAfterSec * 1000 });
            continue;
          }
          ticket.release({ kind: 'ok', latencyMs: LATENCY_MS });
          done.push(now());
          break;
        }
      }
    };
    let finished = false;
    const all = Promise.all(Array.from({ length: 8 }, worker)).then(() => {
      finished = true;
    });
    // Bounded: 240 requests at about 40/s need about 6 virtual seconds.
    for (let step = 0; !finished && step < 60_000; step++) await vi.advanceTimersByTimeAsync(5);
    await all;

    const s = limiter.snapshot();
    const tail = done.slice(-100);
    const tailRate = (tail.length - 1) / ((tail.at(-1)! - tail[0]!) / 1000);
    const why = JSON.stringify({ snapshot: s, status429, tailRate });
    expect(done).toHaveLength(N);
    // No storm: the first discovery costs the requests in flight when its 429 comes back (here 4 at
    // most: 25 ms each at the rate slow start had reached), then about one per later step.
    expect(status429, why).toBeLessThanOrEqual(6);
    expect(s.rateLimited, why).toBe(status429);
    expect(s.learnedLimitRps, why).toBeGreaterThan(LIMIT * 0.9);
    expect(s.learnedLimitRps, why).toBeLessThan(LIMIT * 1.1);
    expect(s.rps, why).toBeGreaterThan(LIMIT * 0.75);
    expect(s.rps, why).toBeLessThanOrEqual(LIMIT * 1.02);
    expect(tailRate, why).toBeGreaterThan(LIMIT * 0.75);
    expect(tailRate, why).toBeLessThan(LIMIT * 1.05);
  });
});
