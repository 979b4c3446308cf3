import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../src/crm/index.js';
import { useFakeClock, type FakeClock } from './helpers/fake-clock.js';

// A CRM that limits with a token bucket (a rate and a small burst) refuses the first requests a
// client sends together, and refuses at the moment the sending rate crosses the limit. The client
// learned its limit from the opening burst's refusals and settled at a fifth of the limit; it now
// learns nothing from them. Simulated time; each request answers in 30 ms.

interface Server {
  /** Whether a request arriving now is accepted. */
  admit(t: number): boolean;
}

function tokenBucket(rps: number, burst: number): Server {
  let tokens = burst;
  let last = 0;
  return {
    admit(t) {
      tokens = Math.min(burst, tokens + ((t - last) * rps) / 1000);
      last = t;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
  };
}

function fixedWindow(rps: number): Server {
  let window = -1;
  let count = 0;
  return {
    admit(t) {
      const w = Math.floor(t / 1000);
      if (w !== window) [window, count] = [w, 0];
      count++;
      return count <= rps;
    },
  };
}

/** Eight workers send through the limiter for `ms`; returns the accepted requests' times and the refusals. */
async function drive(clock: FakeClock, server: Server, ms: number): Promise<{ accepted: number[]; refused: number }> {
  const limiter = createRateLimiter({ maxConcurrency: 8, now: clock.now });
  const accepted: number[] = [];
  let refused = 0;
  const end = clock.now() + ms;
  const worker = async (): Promise<void> => {
    while (clock.now() < end) {
      const ticket = await limiter.acquire();
      const ok = server.admit(clock.now());
      await clock.sleep(30);
      if (ok) {
        accepted.push(clock.now());
        ticket.release({ kind: 'ok', latencyMs: 30 });
      } else {
        refused++;
        ticket.release({ kind: 'rateLimited', retryAfterMs: 1000 });
      }
    }
  };
  await clock.run(Promise.all(Array.from({ length: 8 }, worker)), ms + 10_000);
  return { accepted, refused };
}

describe('the adaptive limiter against a token-bucket limit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a refusal of slow start's opening burst teaches no limit: past the fifth of the limit it once learned from it", async () => {
    const clock = useFakeClock();
    const ms = 30_000;
    const { accepted } = await drive(clock, tokenBucket(40, 2), ms);
    const late = accepted.filter((t) => t >= ms / 10 && t < ms).length / ((ms * 0.9) / 1000);
    expect(late).toBeGreaterThan(0.3 * 40);
  });

  // Known shortfall (test/independent/push-rate.test.ts, scenario C): the limit learned when slow
  // start is refused is the last second's count, which lags the climbing rate that a token bucket
  // refuses; the run then stays at 35-60% of the limit, probing up at 1% per 20 s. Probing such a
  // limit faster cost a window-counting server (the simulator's kind) extra refusals; the fix
  // needs bench/client-rate.ts runs against both kinds of server.
  for (const [name, server, limit, known] of [
    ['a token bucket of 40/s with a burst of 2', () => tokenBucket(40, 2), 40, true],
    ['a token bucket of 40/s with a burst of 10', () => tokenBucket(40, 10), 40, true],
    ['a token bucket of 120/s with a burst of 5', () => tokenBucket(120, 5), 120, true],
    ['a fixed window of 40 a second (the simulator)', () => fixedWindow(40), 40, false],
  ] as const) {
    (known ? it.fails : it)(`${name}: at least 85% of the limit after the first tenth, few refusals`, async () => {
      const clock = useFakeClock();
      const ms = 30_000;
      const { accepted, refused } = await drive(clock, server(), ms);
      const late = accepted.filter((t) => t >= ms / 10 && t < ms).length / ((ms * 0.9) / 1000);
      expect(late).toBeGreaterThanOrEqual(0.85 * limit);
      expect(refused / (accepted.length + refused)).toBeLessThan(0.01);
    });
  }
});
