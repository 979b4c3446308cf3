import { describe, expect, it } from 'vitest';
import { withSimClient } from './helpers/sim-client.js';

describe('tags.list and lists.list page through the one paginator', () => {
  it('read every tag and list from a real-mode server that pages them and caps per_page', async () => {
    await withSimClient({ contacts: 20, seed: 9, mode: 'real', perPageCap: 3 }, async (sim, client) => {
      const truth = sim.truth();
      const tags = await client.tags.list();
      const lists = await client.lists.list();
      expect(tags.map((t) => t.id).sort((a, b) => a - b)).toEqual(truth.tags.map((t) => Number(t.id)).sort((a, b) => a - b));
      expect(lists.map((l) => l.id).sort((a, b) => a - b)).toEqual(truth.lists.map((l) => Number(l.id)).sort((a, b) => a - b));
      expect(truth.tags.length).toBeGreaterThan(3);
    });
  });
});
