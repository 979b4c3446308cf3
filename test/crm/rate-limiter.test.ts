import { describe, expect, it } from 'vitest';
import { createRateLimiter, RateLimiterAbortedError, sharedRateLimiter } from '../../src/crm/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rate limiter', () => {
  it('spaces requests to the budget and never exceeds the concurrency cap', async () => {
    const limiter = createRateLimiter({ maxRps: 50, maxConcurrency: 3, adaptive: false });
    let inFlight = 0;
    let maxSeen = 0;
    const starts: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        const ticket = await limiter.acquire();
        starts.push(performance.now() - t0);
        inFlight++;
        maxSeen = Math.max(maxSeen, inFlight);
        await sleep(5);
        inFlight--;
        ticket.release({ kind: 'ok', latencyMs: 5 });
      }),
    );
    expect(maxSeen).toBeLessThanOrEqual(3);
    // 40 requests at 50/s with a burst of about one: at least ~38 intervals of 20 ms.
    expect(starts.at(-1)!).toBeGreaterThan(700);
    // No one-second window holds more than the budget plus the one-request burst.
    for (const s of starts) expect(starts.filter((x) => x >= s && x < s + 1000).length).toBeLessThanOrEqual(51);
  });

  it('a 429 pauses everyone for Retry-After and lowers the rate; later 429s of the same episode count once', async () => {
    const limiter = createRateLimiter({ initialRps: 100, maxConcurrency: 8 });
    // Enough traffic at the budget for its rate to be a measurement (a sparse 429 teaches nothing).
    for (let i = 0; i < 6; i++) (await limiter.acquire()).release({ kind: 'ok', latencyMs: 1 });
    const a = await limiter.acquire();
    const b = await limiter.acquire();
    const before = limiter.snapshot().rps;
    a.release({ kind: 'rateLimited', retryAfterMs: 300 });
    const afterFirst = limiter.snapshot().rps;
    b.release({ kind: 'rateLimited', retryAfterMs: 300 });
    expect(afterFirst).toBeLessThan(before);
    expect(limiter.snapshot().rps).toBe(afterFirst); // b was sent before the decrease: same episode
    expect(limiter.snapshot().learnedLimitRps).toBeDefined();
    const t = performance.now();
    const c = await limiter.acquire();
    expect(performance.now() - t).toBeGreaterThanOrEqual(280);
    c.release({ kind: 'ok', latencyMs: 1 });
  });

  it('slow start grows the rate only while the budget is the bottleneck', async () => {
    const limiter = createRateLimiter({ initialRps: 20, maxConcurrency: 8 });
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        const t = await limiter.acquire();
        t.release({ kind: 'ok', latencyMs: 1 });
      }),
    );
    const grown = limiter.snapshot().rps;
    expect(grown).toBeGreaterThan(25);
    await sleep(1100);
    // Idle: a lone request does not bank more rate.
    const t = await limiter.acquire();
    t.release({ kind: 'ok', latencyMs: 1 });
    expect(limiter.snapshot().rps).toBe(grown);
  });

  it('a configured ceiling is never exceeded, even after probing', async () => {
    const limiter = createRateLimiter({ maxRps: 30, maxConcurrency: 4 });
    await Promise.all(
      Array.from({ length: 30 }, async () => {
        const t = await limiter.acquire();
        t.release({ kind: 'ok', latencyMs: 1 });
      }),
    );
    expect(limiter.snapshot().rps).toBeLessThanOrEqual(30);
  });

  it('rising latency stops the climb and backs off', async () => {
    const limiter = createRateLimiter({ initialRps: 200, maxConcurrency: 2 });
    const run = async (latencyMs: number, n: number) => {
      await Promise.all(
        Array.from({ length: n }, async () => {
          const t = await limiter.acquire();
          t.release({ kind: 'ok', latencyMs });
        }),
      );
    };
    await run(5, 60);
    const fast = limiter.snapshot().rps;
    await run(900, 200);
    expect(limiter.snapshot().rps).toBeLessThan(fast);
  });

  it('a waiting acquire can be aborted', async () => {
    const limiter = createRateLimiter({ maxRps: 1, maxConcurrency: 1 });
    const first = await limiter.acquire();
    const ac = new AbortController();
    const waiting = limiter.acquire(ac.signal);
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(RateLimiterAbortedError);
    expect(limiter.snapshot().queued).toBe(0);
    first.release({ kind: 'ok', latencyMs: 1 });
  });

  it('release is idempotent and the shared limiter is one per key', async () => {
    const limiter = createRateLimiter({ maxRps: 1000, maxConcurrency: 1 });
    const t = await limiter.acquire();
    t.release({ kind: 'ok', latencyMs: 1 });
    t.release({ kind: 'ok', latencyMs: 1 });
    expect(limiter.snapshot().inFlight).toBe(0);
    expect(sharedRateLimiter('k|a')).toBe(sharedRateLimiter('k|a'));
    expect(sharedRateLimiter('k|a')).not.toBe(sharedRateLimiter('k|b'));
  });
});
