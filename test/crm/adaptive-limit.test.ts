import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/crm/index.js';
import { withSimClient } from './helpers/sim-client.js';

/**
 * The limiter discovers a server's request limit it was not told about: a couple of 429s while it
 * probes, then it settles just under the limit. (The 2,000-upsert, 20 req/s figure is in the report.)
 */
describe('adaptive rate limit against the simulator', () => {
  it('approaches a 40 req/s limit without a 429 storm and settles just under it', async () => {
    const LIMIT = 40;
    const N = 240;
    const limiter = createRateLimiter({ maxConcurrency: 8 });
    await withSimClient(
      { contacts: 10, seed: 21, faults: { rateLimitRps: LIMIT } },
      async (sim, client) => {
        const done: number[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < N) {
              const k = next++;
              await client.contacts.upsert({ email: `adaptive.${k}@example.test`, status: 'subscribed' });
              done.push(performance.now());
            }
          }),
        );
        const s = limiter.snapshot();
        const stats = client.stats();
        const tail = done.slice(-100);
        const tailRate = (tail.length - 1) / ((tail.at(-1)! - tail[0]!) / 1000);
        const why = JSON.stringify({ snapshot: s, stats, tailRate });
        expect(stats.status429, why).toBeLessThanOrEqual(4); // no storm: about one per discovery step
        expect(sim.stats().status429).toBe(stats.status429);
        expect(s.learnedLimitRps, why).toBeGreaterThan(LIMIT * 0.9);
        expect(s.learnedLimitRps, why).toBeLessThan(LIMIT * 1.1);
        // Settled just under the limit (a loaded test machine may add a latency back-off on top).
        expect(s.rps, why).toBeGreaterThan(LIMIT * 0.75);
        expect(s.rps, why).toBeLessThanOrEqual(LIMIT * 1.02);
        expect(tailRate, why).toBeGreaterThan(LIMIT * 0.75);
        expect(tailRate, why).toBeLessThan(LIMIT * 1.05);
      },
      { limiter },
    );
  });
});
