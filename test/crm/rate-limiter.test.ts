import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter, RateLimiterAbortedError, sharedRateLimiter, type RateLimiter } from '../../src/crm/index.js';
import { useFakeClock, type FakeClock } from './helpers/fake-clock.js';

// Every test runs on simulated time, so the assertions hold however loaded the machine is.

/** When each of `n` requests, all asked at once, got its ticket (ms after the first ask); each answers in 1 ms. */
async function startTimes(clock: FakeClock, limiter: RateLimiter, n: number): Promise<number[]> {
  const t0 = clock.now();
  const starts: number[] = [];
  const all = Promise.all(
    Array.from({ length: n }, async () => {
      const t = await limiter.acquire();
      starts.push(clock.now() - t0);
      await clock.sleep(1);
      t.release({ kind: 'ok', latencyMs: 1 });
    }),
  );
  await clock.run(all, 5_000);
  return starts;
}
describe('rate limiter', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('spaces requests to the budget and never exceeds the concurrency cap', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ maxRps: 50, maxConcurrency: 3, adaptive: false, now: clock.now });
    let inFlight = 0;
    let maxSeen = 0;
    const starts: number[] = [];
    const t0 = clock.now();
    const all = Promise.all(
      Array.from({ length: 40 }, async () => {
        const ticket = await limiter.acquire();
        starts.push(clock.now() - t0);
        inFlight++;
        maxSeen = Math.max(maxSeen, inFlight);
        await clock.sleep(5);
        inFlight--;
        ticket.release({ kind: 'ok', latencyMs: 5 });
      }),
    );
    await clock.run(all, 5_000);
    expect(maxSeen).toBeLessThanOrEqual(3);
    // 40 requests at 50/s with a burst of about one: at least ~38 intervals of 20 ms, and no more
    // than the budget asks for (the limiter holds nobody back beyond it).
    expect(starts.at(-1)!).toBeGreaterThanOrEqual(38 * 20);
    expect(starts.at(-1)!).toBeLessThanOrEqual(40 * 20);
    for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(10);
    // No one-second window holds more than the budget plus the one-request burst.
    for (const s of starts) expect(starts.filter((x) => x >= s && x < s + 1000).length).toBeLessThanOrEqual(51);
  });

  it('a 429 pauses everyone for Retry-After and lowers the rate; later 429s of the same episode count once', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ initialRps: 100, maxConcurrency: 8, now: clock.now });
    // Enough traffic at the budget for its rate to be a measurement (a sparse 429 teaches nothing):
    // past slow start's first requests, which go out at once (the concurrency cap, 8).
    for (let i = 0; i < 12; i++) (await clock.run(limiter.acquire(), 1_000)).release({ kind: 'ok', latencyMs: 1 });
    const a = await clock.run(limiter.acquire(), 1_000);
    const b = await clock.run(limiter.acquire(), 1_000);
    await clock.run(clock.sleep(5), 100); // the requests' latency: their answers come after both were sent
    const before = limiter.snapshot().rps;
    a.release({ kind: 'rateLimited', retryAfterMs: 300 });
    const afterFirst = limiter.snapshot().rps;
    b.release({ kind: 'rateLimited', retryAfterMs: 300 });
    expect(afterFirst).toBeLessThan(before);
    expect(limiter.snapshot().rps).toBe(afterFirst); // b was sent before the decrease: same episode
    expect(limiter.snapshot().learnedLimitRps).toBeDefined();
    const t = clock.now();
    const c = await clock.run(limiter.acquire(), 1_000);
    expect(clock.now() - t).toBeGreaterThanOrEqual(300);
    expect(clock.now() - t).toBeLessThan(400); // released once the pause ends, not held longer
    c.release({ kind: 'ok', latencyMs: 1 });
  });

  it('slow start grows the rate only while the budget is the bottleneck', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ initialRps: 20, maxConcurrency: 8, now: clock.now });
    const all = Promise.all(
      Array.from({ length: 40 }, async () => {
        const t = await limiter.acquire();
        t.release({ kind: 'ok', latencyMs: 1 });
      }),
    );
    await clock.run(all, 5_000);
    const grown = limiter.snapshot().rps;
    expect(grown).toBeGreaterThan(25);
    await clock.run(clock.sleep(1100), 2_000);
    // Idle: a lone request does not bank more rate.
    const t = await clock.run(limiter.acquire(), 1_000);
    t.release({ kind: 'ok', latencyMs: 1 });
    expect(limiter.snapshot().rps).toBe(grown);
  });

  it('slow start doubles the rate within half a second of saturated traffic', async () => {
    // A backfill's first second: with the rate doubling only about every 0.7 s, its first pages came
    // at half the pace the server answered them (bench/results/notes.md, "the client's slow start").
    const clock = useFakeClock();
    const limiter = createRateLimiter({ initialRps: 10, maxConcurrency: 8, now: clock.now });
    let stop = false;
    const sent: number[] = [];
    const worker = async (): Promise<void> => {
      while (!stop) {
        const t = await limiter.acquire();
        sent.push(clock.now());
        await clock.sleep(20);
        t.release({ kind: 'ok', latencyMs: 20 });
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await clock.run(clock.sleep(500), 1_000);
    const at500 = limiter.snapshot().rps;
    stop = true;
    await clock.run(Promise.all(workers), 1_000);
    expect(at500).toBeGreaterThanOrEqual(30);
    // The first requests at once, up to the concurrency cap; then paced, the budget growing from
    // 10 a second by 3 an answer: the next two within their own 100 ms at most.
    expect(sent.filter((t) => t === sent[0]).length).toBe(8);
    expect(sent.filter((t) => t > sent[0]! && t < sent[0]! + 100).length).toBeLessThanOrEqual(3);
    expect(limiter.snapshot().phase).toBe('slow_start');
  });

  it('slow start paces from 20 requests a second when no rate is configured', async () => {
    // From 10, a backfill's first range requests waited up to 100 ms for their slots while the
    // answers they waited for took 150 ms: about a tenth of a second of a 100k backfill
    // (bench/results/notes.md, "slow start from 20 requests a second").
    const clock = useFakeClock();
    const starts = await startTimes(clock, createRateLimiter({ maxConcurrency: 2, now: clock.now }), 3);
    // Two at once (the cap), the third half an interval of the starting budget later: 25 ms at 20/s.
    expect(starts.slice(0, 2)).toEqual([0, 0]);
    expect(starts[2]).toBeGreaterThanOrEqual(20);
    expect(starts[2]).toBeLessThan(30);
  });

  it('slow start sends its first requests at once, up to the concurrency cap, then paces', async () => {
    const clock = useFakeClock();
    const starts = await startTimes(clock, createRateLimiter({ initialRps: 10, maxConcurrency: 4, now: clock.now }), 8);
    expect(starts.slice(0, 4)).toEqual([0, 0, 0, 0]);
    // The fifth waits for its slot in the budget (10/s, grown by the four answers), not only for
    // a free place among the four.
    expect(starts[4]).toBeGreaterThanOrEqual(10);
    for (let i = 5; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThan(0);
    // Once the limiter has learned a limit (steady), there is no such burst: a configured
    // budget paces from the first request.
    const fixed = createRateLimiter({ maxRps: 10, maxConcurrency: 4, now: clock.now });
    const f0 = clock.now();
    const fixedStarts: number[] = [];
    const fixedAll = Promise.all(
      Array.from({ length: 3 }, async () => {
        const t = await fixed.acquire();
        fixedStarts.push(clock.now() - f0);
        t.release({ kind: 'ok', latencyMs: 1 });
      }),
    );
    await clock.run(fixedAll, 5_000);
    expect(fixedStarts[1]).toBeGreaterThanOrEqual(50);
  });

  it('a configured ceiling is never exceeded, even after probing', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ maxRps: 30, maxConcurrency: 4, now: clock.now });
    const all = Promise.all(
      Array.from({ length: 30 }, async () => {
        const t = await limiter.acquire();
        t.release({ kind: 'ok', latencyMs: 1 });
      }),
    );
    await clock.run(all, 5_000);
    expect(limiter.snapshot().rps).toBeLessThanOrEqual(30);
  });

  it('rising latency stops the climb and backs off', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ initialRps: 200, maxConcurrency: 2, now: clock.now });
    const run = async (latencyMs: number, n: number) => {
      const all = Promise.all(
        Array.from({ length: n }, async () => {
          const t = await limiter.acquire();
          t.release({ kind: 'ok', latencyMs });
        }),
      );
      await clock.run(all, 10_000);
    };
    await run(5, 60);
    const fast = limiter.snapshot().rps;
    await run(900, 200);
    expect(limiter.snapshot().rps).toBeLessThan(fast);
  });

  it('a waiting acquire can be aborted', async () => {
    useFakeClock(); // the waiting acquire's timer never fires: only the abort ends the wait
    const limiter = createRateLimiter({ maxRps: 1, maxConcurrency: 1, now: () => Date.now() });
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
