import { describe, expect, it } from 'vitest';
import { withSim, type Json } from './helpers.js';

describe('churn', () => {
  it('inserts, updates and deletes at the given rates through the API write path, and stops', async () => {
    const { sim, call } = await withSim({ contacts: 200, seed: 5 });
    try {
      const before = sim.truth().contacts;
      const churn = sim.churn({ insertsPerSec: 100, updatesPerSec: 100, deletesPerSec: 50 });
      await new Promise((r) => setTimeout(r, 400));
      await churn.stop();
      const done = churn.counts();
      expect(done.inserts).toBeGreaterThan(10);
      expect(done.updates).toBeGreaterThan(10);
      expect(done.deletes).toBeGreaterThan(5);
      const after = sim.truth().contacts;
      expect(after.length).toBe(before.length + done.inserts - done.deletes);
      const newIds = after.filter((c) => c.id > 200);
      expect(newIds.length).toBe(done.inserts - (done.deletes - before.filter((c) => !after.some((a) => a.id === c.id)).length));
      const changed = after.filter((c) => {
        const b = before.find((x) => x.id === c.id);
        return b && b.updated_at_iso !== c.updated_at_iso;
      });
      expect(changed.length).toBeGreaterThan(0);
      // The API shows the same state as the truth.
      const api = await call('GET', '/subscribers?per_page=1000');
      expect(api.json.subscribers.total).toBe(after.length);
      expect(api.json.subscribers.data.map((c: Json) => c.id)).toEqual(after.map((c) => c.id).reverse());
      // Stopped: no more changes.
      const frozen = sim.truth().contacts.length;
      await new Promise((r) => setTimeout(r, 100));
      expect(sim.truth().contacts.length).toBe(frozen);
    } finally {
      await sim.close();
    }
  });

  it('makes offset pagination drift: a page walk during deletes misses or repeats rows', async () => {
    const { sim, call } = await withSim({ contacts: 300, seed: 6 });
    try {
      const seen: number[] = [];
      const churn = sim.churn({ deletesPerSec: 400, insertsPerSec: 200 });
      for (let page = 1; page <= 30; page++) {
        const r = await call('GET', `/subscribers?per_page=10&page=${page}&order_type=ASC`);
        seen.push(...r.json.subscribers.data.map((c: Json) => c.id));
        await new Promise((res) => setTimeout(res, 5));
      }
      await churn.stop();
      const live = new Set(sim.truth().contacts.map((c) => c.id));
      const missed = [...live].filter((id) => !seen.includes(id) && id <= 300);
      expect(missed.length).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });
});
