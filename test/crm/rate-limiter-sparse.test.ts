import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter, RateLimitedError } from '../../src/crm/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { api } from '../simulator/helpers.js';
import { useFakeClock } from './helpers/fake-clock.js';
import { clientFor } from './helpers/sim-client.js';

/**
 * Issue 14 item 6: one 429 met while traffic was sparse (the server's window filled by someone
 * else) used to be taken as the server's limit: about 1 request/s for the rest of the run while the
 * server allowed 25/s.
 */
describe('a 429 amid sparse traffic', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('teaches the limiter nothing, so the run that follows reaches the server allowance (injected clock)', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ maxConcurrency: 8, now: clock.now });
    const ALLOWED = 25;
    let window = { start: -Infinity, count: 0 };
    /** A server with fixed one-second windows of ALLOWED requests; `others` were used by another process. */
    const serve = (others = 0): { ok: true } | { ok: false; retryAfterMs: number } => {
      const t = Date.now();
      if (t - window.start >= 1000) window = { start: t, count: 0 };
      window.count += 1 + others;
      return window.count <= ALLOWED ? { ok: true } : { ok: false, retryAfterMs: window.start + 1000 - t };
    };
    const request = async (others = 0): Promise<boolean> => {
      const ticket = await limiter.acquire();
      await clock.sleep(20); // latency
      const answer = serve(others);
      ticket.release(answer.ok ? { kind: 'ok', latencyMs: 20 } : { kind: 'rateLimited', retryAfterMs: answer.retryAfterMs });
      return answer.ok;
    };
    const drive = <T>(p: Promise<T>, maxMs: number): Promise<T> => clock.run(p, maxMs);

    // Sparse traffic, then a request in a window another process has filled.
    expect(await drive(request(), 1000)).toBe(true);
    await drive(clock.sleep(400), 1000);
    expect(await drive(request(), 1000)).toBe(true);
    expect(await drive(request(ALLOWED), 1000)).toBe(false);
    const after = limiter.snapshot();
    expect(after.learnedLimitRps).toBeUndefined();
    expect(after.rps).toBeGreaterThanOrEqual(10);
    expect(after.pausedForMs).toBeGreaterThan(0);

    // An incremental-size run: 300 requests from 8 workers, for at most 60 simulated seconds.
    const started = Date.now();
    const accepted: number[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < 300 && Date.now() - started < 60_000) {
        next++;
        if (await request()) accepted.push(Date.now());
        else next--;
      }
    };
    await drive(Promise.all(Array.from({ length: 8 }, worker)), 61_000);
    expect(accepted).toHaveLength(300);
    const seconds = (Date.now() - started) / 1000;
    const end = accepted.at(-1)!;
    const lastSecondsRate = accepted.filter((t) => t > end - 3000).length / 3;
    const why = JSON.stringify({ seconds, lastSecondsRate, snapshot: limiter.snapshot() });
    expect(lastSecondsRate, why).toBeGreaterThan(ALLOWED * 0.7);
    expect(seconds, why).toBeLessThan(20); // 300 at 25/s is 12 s; stuck at the sparse rate it was about 300 s
  });

  it('against the simulator (rateLimitRps 25): after a 429 burst another client caused, the run is not throttled', { timeout: 60_000 }, async () => {
    const sim = await startSimulator({ contacts: 50, seed: 12, faults: { rateLimitRps: 25 } });
    const limiter = createRateLimiter({ maxConcurrency: 8 });
    const ours = clientFor(sim, { limiter });
    // Another process on the same credential (plain fetch: no limiter of ours).
    const other = api(sim);
    try {
      await ours.contacts.listPage({ page: 1, perPage: 5 });
      await ours.contacts.listPage({ page: 2, perPage: 5 });
      for (let attempt = 0; attempt < 5 && ours.stats().status429 === 0; attempt++) {
        // Fill the current window, then ask in it: the server refuses us although we sent little.
        await Promise.all(Array.from({ length: 30 }, () => other('GET', '/tags/1')));
        await retryRateLimited(() => ours.contacts.listPage({ page: 1, perPage: 5 }));
      }
      expect(ours.stats().status429).toBeGreaterThan(0);
      const afterBurst = limiter.snapshot();
      expect(afterBurst.learnedLimitRps, JSON.stringify(afterBurst)).toBeUndefined();
      expect(afterBurst.rps).toBeGreaterThanOrEqual(10);

      // An incremental-size run: 120 page reads from 8 workers.
      const before429 = ours.stats().status429;
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < 120) {
            const page = (next++ % 5) + 1;
            await retryRateLimited(() => ours.contacts.listPage({ page, perPage: 10 }));
          }
        }),
      );
      const s = limiter.snapshot();
      const why = JSON.stringify({ snapshot: s, stats: ours.stats() });
      // It grew towards the server's 25/s (a 429 there measures the real limit) instead of ~1/s.
      expect(s.rps, why).toBeGreaterThan(12);
      if (s.learnedLimitRps !== undefined) expect(s.learnedLimitRps, why).toBeGreaterThan(15);
      expect(ours.stats().status429 - before429, why).toBeLessThanOrEqual(4);
    } finally {
      await ours.close();
      await sim.close();
    }
  });
});

/** What Temporal does with an activity that met a 429: attempt again (the limiter sat out the pause). */
async function retryRateLimited<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof RateLimitedError) || attempt >= 10) throw e;
    }
  }
}
