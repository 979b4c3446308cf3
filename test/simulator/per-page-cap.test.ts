import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/simulator/options.js';
import { withSim } from './helpers.js';

describe('perPageCap: a server that serves fewer rows than per_page asks', () => {
  for (const mode of ['spec', 'real'] as const) {
    it(`${mode} mode: serves at most the cap and says so in the envelope`, async () => {
      const { sim, call } = await withSim({ contacts: 620, seed: 3, mode, perPageCap: 250 });
      try {
        const first = await call('GET', '/subscribers?per_page=500&page=1');
        expect(first.status).toBe(200);
        const p = first.json.subscribers;
        expect(p.data).toHaveLength(250);
        expect(p).toMatchObject({ total: 620, per_page: 250, current_page: 1, last_page: 3, from: 1, to: 250 });
        const last = await call('GET', '/subscribers?per_page=500&page=3');
        expect(last.json.subscribers.data).toHaveLength(120);
        expect(last.json.subscribers).toMatchObject({ per_page: 250, from: 501, to: 620 });
        // Below the cap, per_page is honoured as asked.
        const small = await call('GET', '/subscribers?per_page=40');
        expect(small.json.subscribers).toMatchObject({ per_page: 40, last_page: 16 });
        expect(small.json.subscribers.data).toHaveLength(40);
        // Other listings go through the same paging.
        const subs = await call('GET', '/funnels/1/subscribers?per_page=1');
        expect(subs.json.funnel_subscribers.per_page).toBe(1);
      } finally {
        await sim.close();
      }
    });
  }

  it('without the option nothing is capped, and a bad cap names the fix', async () => {
    const { sim, call } = await withSim({ contacts: 620, seed: 3 });
    try {
      const r = await call('GET', '/subscribers?per_page=500');
      expect(r.json.subscribers).toMatchObject({ per_page: 500, last_page: 2 });
    } finally {
      await sim.close();
    }
    expect(() => resolveOptions({ perPageCap: 0 })).toThrow(/perPageCap must be a positive integer/);
  });
});
