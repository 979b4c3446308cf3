import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../src/crm/index.js';
import { useFakeClock } from './helpers/fake-clock.js';
import { withSimClient } from './helpers/sim-client.js';

describe('rate limiter priority', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('grants waiting requests lowest priority first, in arrival order within one priority', async () => {
    const clock = useFakeClock();
    const limiter = createRateLimiter({ maxRps: 1000, maxConcurrency: 1, adaptive: false, now: clock.now });
    const held = await clock.run(limiter.acquire(), 1_000);
    const order: string[] = [];
    const waiting = (
      [
        ['p9', 9],
        ['p3a', 3],
        ['none', undefined],
        ['p3b', 3],
        ['p1', 1],
      ] as const
    ).map(async ([name, priority]) => {
      const t = await limiter.acquire(undefined, priority);
      order.push(name);
      t.release({ kind: 'ok', latencyMs: 1 });
    });
    held.release({ kind: 'ok', latencyMs: 1 });
    await clock.run(Promise.all(waiting), 1_000);
    // No priority counts as 0: a lone lookup does not queue behind a scan's pages.
    expect(order).toEqual(['none', 'p1', 'p3a', 'p3b', 'p9']);
  });

  it('contact listing pages that wait for a slot are sent earliest page first, whichever scan asked first', async () => {
    const limiter = createRateLimiter({ maxRps: 5000, maxConcurrency: 1, adaptive: false });
    await withSimClient(
      { contacts: 120, seed: 5 },
      async (_sim, client) => {
        // The only slot is taken: the pages below queue in the order they were asked for.
        const held = await limiter.acquire();
        const answered: number[] = [];
        const asked = [9, 3, 6, 1].map(async (page) => {
          const p = await client.contacts.listPageRaw({ page, perPage: 10, order: 'asc', orderBy: 'id' });
          answered.push(p.currentPage);
        });
        // Let every request reach the limiter's queue before the slot frees.
        await new Promise((r) => setImmediate(r));
        expect(limiter.snapshot().queued).toBe(4);
        held.release({ kind: 'ok', latencyMs: 1 });
        await Promise.all(asked);
        expect(answered).toEqual([1, 3, 6, 9]);
      },
      { limiter },
    );
  });
});
