import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/crm/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A server that allows `limitAt(t)` requests in any one-second window and answers 429 with a
 * Retry-After beyond that; drives the limiter with several workers for `seconds`.
 */
async function drive(limitAt: (t: number) => number, seconds: number, stormRecoveryMs: number) {
  const limiter = createRateLimiter({ initialRps: 20, maxConcurrency: 6, stormRecoveryMs });
  const accepted: number[] = [];
  let refused = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const ticket = await limiter.acquire();
      await sleep(3); // the request's latency; the server then decides at once
      const t = performance.now() - t0;
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
  await Promise.all(Array.from({ length: 6 }, worker));
  return { accepted, refused };
}

describe('rate limiter after a 429 storm', () => {
  it('returns towards the rate the server accepted before a brief storm', { timeout: 30_000 }, async () => {
    // 40/s, then a two-second storm at 2/s, then 40/s again.
    const { accepted } = await drive((t) => (t >= 1500 && t < 3500 ? 2 : 40), 9, 1000);
    const lastTwoSeconds = accepted.filter((t) => t >= 7000 && t < 9000).length / 2;
    // Stuck at the storm's learned rate this measured about 6/s; recovered, about 19/s.
    expect(lastTwoSeconds).toBeGreaterThan(12);
  });

  it('keeps a limit the server really lowered, after at most one more refusal episode', { timeout: 30_000 }, async () => {
    // 40/s, then 5/s for good.
    const { accepted, refused } = await drive((t) => (t >= 1500 ? 5 : 40), 8, 1000);
    const lastTwoSeconds = accepted.filter((t) => t >= 6000 && t < 8000).length / 2;
    expect(lastTwoSeconds).toBeLessThanOrEqual(5.5);
    expect(lastTwoSeconds).toBeGreaterThan(3);
    expect(refused).toBeLessThan(40);
  });
});
