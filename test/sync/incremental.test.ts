import { describe, expect, it } from 'vitest';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { withSyncEnv } from './helpers/sync-env.js';
import type { StreamName } from '../../workflows/streams.js';

const STREAMS: StreamName[] = ['contacts', 'tags', 'lists'];

describe('incremental sync and reconciliation', () => {
  it('converges after inserts, updates and deletes; new contacts alone cost no sweep', async () => {
    await withSyncEnv({ sim: { contacts: 260, seed: 5 } }, async (env) => {
      await env.sync({ streams: STREAMS });
      const ids = env.sim.truth().contacts.map((c) => c.id);

      // Inserts only: found newest-first, no sweep needed (the live count matches the CRM's total).
      for (let i = 0; i < 7; i++) env.sim.mutate.createContact({ email: `new-${i}@example.com`, status: 'subscribed', first_name: `New${i}` });
      const inserts = await env.sync({ streams: ['contacts'] });
      expect(inserts.streams[0]).toMatchObject({ mode: 'incremental', inserted: 7 });
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);

      // Deletes and updates: the count disagrees, so the run sweeps, updating and tombstoning.
      for (const id of [ids[0], ids[10], ids[100], ids[ids.length - 1]]) env.sim.mutate.deleteContact(id as number);
      for (const id of [ids[3], ids[50], ids[200]]) env.sim.mutate.updateContact(id as number, { first_name: 'Changed', city: 'Lisbon' });
      const tag = env.sim.mutate.createTag('Reconciled');
      env.sim.mutate.addTag(ids[4] as number, tag.id);
      const swept = await env.sync({ streams: STREAMS });
      const contacts = swept.streams.find((s) => s.stream === 'contacts');
      expect(contacts).toMatchObject({ mode: 'reconcile', deleted: 4 });
      expect(contacts?.updated).toBeGreaterThanOrEqual(4);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
      const tombstoned = await env.read((w) => w.query(`SELECT count(*) AS n FROM contacts WHERE _deleted_at IS NOT NULL`));
      expect(Number(tombstoned[0]?.n)).toBe(4);

      // Updates alone do not change counts: in spec mode (no updated_at ordering) they wait for the
      // rolling sweep's slice to reach them (this run's slice is past them) or the reconcile sweep.
      env.sim.mutate.updateContact(ids[20] as number, { last_name: 'Later' });
      await env.sync({ streams: ['contacts'], reconcile: 'never' });
      expect((await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).join()).toMatch(/1 differ/);
      const forced = await env.sync({ streams: ['contacts'], reconcile: 'always' });
      expect(forced.streams[0]).toMatchObject({ mode: 'reconcile', updated: 1, deleted: 0 });
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
    });
  });
});
