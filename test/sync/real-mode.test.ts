import { describe, expect, it } from 'vitest';
import { STREAMS } from '../../workflows/streams.js';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { withSyncEnv } from './helpers/sync-env.js';

describe('sync against the real deployment quirks (fluentcrm-2.9 mode)', () => {
  it('backfills every stream exactly and converges after deletes', async () => {
    await withSyncEnv({ sim: { contacts: 260, seed: 23, mode: 'real' } }, async (env) => {
      const first = await env.sync({ streams: [...STREAMS] });
      expect(first.failed).toEqual([]);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
      const ids = env.sim.truth().contacts.map((c) => c.id);
      env.sim.mutate.deleteContact(ids[5] as number);
      env.sim.mutate.createContact({ email: 'real-new@example.com', status: 'subscribed' });
      const second = await env.sync({ streams: ['contacts'] });
      expect(second.streams[0]).toMatchObject({ mode: 'reconcile', deleted: 1 });
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);
    });
  });
});
