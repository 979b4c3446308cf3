import { describe, expect, it } from 'vitest';
import { startSimulator, SimulatorOptionsError } from '../../src/simulator/index.js';
import { api } from './helpers.js';

describe('seeded data', () => {
  it('is deterministic by seed and differs between seeds', async () => {
    const [a, b, c] = await Promise.all([startSimulator({ contacts: 50, seed: 1 }), startSimulator({ contacts: 50, seed: 1 }), startSimulator({ contacts: 50, seed: 2 })]);
    try {
      const strip = (t: ReturnType<typeof a.truth>) => ({ ...t, webhooks: [], deliveries: [] });
      expect(strip(a.truth())).toEqual(strip(b.truth()));
      expect(a.truth().contacts).not.toEqual(c.truth().contacts);
      const t = a.truth();
      expect(new Set(t.contacts.map((x) => x.email)).size).toBe(50);
      expect(new Set(t.contacts.map((x) => x.status)).size).toBeGreaterThanOrEqual(4);
      expect(t.campaigns.length).toBeGreaterThan(5);
      expect(t.funnels.some((f) => (f.steps as unknown[]).length > 0)).toBe(true);
      expect(t.funnelSubscribers.length).toBeGreaterThan(0);
      expect(t.companies.length).toBeGreaterThanOrEqual(3);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('holds 1,000,000 contacts compactly and serves the last page and a lookup by email', async () => {
    const before = process.memoryUsage().rss;
    const sim = await startSimulator({ contacts: 1_000_000, seed: 9 });
    try {
      const grownMb = (process.memoryUsage().rss - before) / 1e6;
      // Whole records would need gigabytes; seeded contacts are regenerated instead of stored.
      expect(grownMb).toBeLessThan(600);
      const call = api(sim);
      const last = await call('GET', '/subscribers?per_page=1000&page=1000');
      expect(last.json.subscribers.total).toBe(1_000_000);
      expect(last.json.subscribers.data).toHaveLength(1000);
      expect(last.json.subscribers.data[999].id).toBe(1);
      const email = last.json.subscribers.data[500].email as string;
      const found = await call('GET', `/subscribers/0?get_by_email=${encodeURIComponent(email)}`);
      expect(found.json.subscriber.id).toBe(last.json.subscribers.data[500].id);
      await call('DELETE', '/subscribers/500000');
      expect((await call('GET', '/subscribers?per_page=1')).json.subscribers.total).toBe(999_999);
      expect((await call('GET', '/subscribers/500000')).status).toBe(404);
    } finally {
      await sim.close();
    }
  });

  it('rejects bad options with a message naming the fix', async () => {
    await expect(startSimulator({ contacts: -1 })).rejects.toThrow(SimulatorOptionsError);
    await expect(startSimulator({ timezone: 'Mars/Olympus' })).rejects.toThrow(/IANA/);
    await expect(startSimulator({ faults: { errorRate: 3 } })).rejects.toThrow(/between 0 and 1/);
    const taken = await startSimulator({ contacts: 1 });
    try {
      const port = Number(new URL(taken.baseUrl).port);
      await expect(startSimulator({ contacts: 1, port })).rejects.toThrow(/in use; choose another port/);
    } finally {
      await taken.close();
    }
  });
});
