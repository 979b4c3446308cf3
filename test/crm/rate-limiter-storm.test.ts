import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../src/crm/index.js';
import { useFakeClock } from './helpers/fake-clock.js';

/**
 * A server that allows `limitAt(t)` requests in any one-second window and answers 429 with a
 * Retry-After beyond that; drives the limiter with several workers for `seconds`.
 */
async function drive(limitAt: (t: number) => number, seconds: number, stormRecoveryMs: number) {
  // Simulated time: the rates below are the limiter's, not the machine's load.
  const clock = useFakeClock();
  const limiter = createRateLimiter({ initialRps: 20, maxConcurrency: 6, stormRecoveryMs, now: clock.now });
  const accepted: number[] = [];
  let refused = 0;
  const t0 = clock.now();
  const end = t0 + seconds * 1000;
  const worker = async () => {
    while (clock.now() < end) {
      const ticket = await limiter.acquire();
      await clock.sleep(3); // the request's latency; the server then decides at once
      const t = clock.now() - t0;
      const inWindow = accepted.filter((a) => a > t - 1000).length;
      if (inWindow < limitAt(t)) {
        accepted.push(t);
        ticket.release({ kind: 'ok', latencyMs: 3 });
      } else {
        refused++;
        ticket.release({ kind: 'rateLimited', retryAfterMs: 200 });
      }
    }
  };
  await clock.run(Promise.all(Array.from({ length: 6 }, worker)), seconds * 1000 + 5_000);
  return { accepted, refused };
}

describe('rate limiter after a 429 storm', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('returns towards the rate the server accepted before a brief storm', async () => {
    // 40/s, then a two-second storm at 2/s, then 40/s again.
    const { accepted } = await drive((t) => (t >= 1500 && t < 3500 ? 2 : 40), 9, 1000);
    const lastTwoSeconds = accepted.filter((t) => t >= 7000 && t < 9000).length / 2;
    // Stuck at the rate learned during the storm it stays near the storm's limit; recovered, it
    // is back at a good part of the 40/s the server accepted before.
    expect(lastTwoSeconds, JSON.stringify({ lastTwoSeconds })).toBeGreaterThan(12);
  });

  it('keeps a limit the server really lowered, after at most one more refusal episode', async () => {
    // 40/s, then 5/s for good.
    const { accepted, refused } = await drive((t) => (t >= 1500 ? 5 : 40), 8, 1000);
    const lastTwoSeconds = accepted.filter((t) => t >= 6000 && t < 8000).length / 2;
    expect(lastTwoSeconds, JSON.stringify({ lastTwoSeconds, refused })).toBeLessThanOrEqual(5.5);
    expect(lastTwoSeconds).toBeGreaterThan(3);
    expect(refused).toBeLessThan(40);
  });
});
