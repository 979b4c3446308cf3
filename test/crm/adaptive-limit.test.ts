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
        expect(stats.status429).toBeLessThanOrEqual(4); // no storm: about one per discovery step
        expect(sim.stats().status429).toBe(stats.status429);
        expect(s.learnedLimitRps).toBeGreaterThan(LIMIT * 0.9);
        expect(s.learnedLimitRps).toBeLessThan(LIMIT * 1.1);
        expect(s.rps).toBeGreaterThan(LIMIT * 0.85);
        expect(s.rps).toBeLessThanOrEqual(LIMIT * 1.02);
        // Once settled, throughput is close to the limit.
        const tail = done.slice(-100);
        const tailRate = (tail.length - 1) / ((tail.at(-1)! - tail[0]!) / 1000);
        expect(tailRate).toBeGreaterThan(LIMIT * 0.85);
        expect(tailRate).toBeLessThan(LIMIT * 1.05);
      },
      { limiter },
    );
  });
});
