import { describe, expect, it } from 'vitest';
import type { StreamResult } from '../../workflows/sync-types.js';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { customValueDiffs, editContacts } from './helpers/edit-contacts.js';
import { SMALL_TUNING, withSyncEnv } from './helpers/sync-env.js';
import type { StreamName } from '../../workflows/streams.js';

// Incremental runs find edits to existing contacts without webhooks (issue 15): the simulator as
// the CRM (real mode reproduces fluentcrm-2.9), real Temporal, real DuckDB.
const STREAMS: StreamName[] = ['contacts', 'tags', 'lists'];

const contactsOf = (r: { streams: StreamResult[] }): StreamResult => {
  const s = r.streams.find((x) => x.stream === 'contacts');
  if (!s) throw new Error('no contacts stream in the result');
  return s;
};

describe('fresh without webhooks', () => {
  it('real mode: one plain sync after field, custom-value, tag-only and list-only edits makes the warehouse equal the CRM', async () => {
    await withSyncEnv({ sim: { contacts: 400, seed: 31, mode: 'real' } }, async (env) => {
      // A long rolling-sweep cycle: its one page must not be what finds these edits.
      const tuning = { ...SMALL_TUNING, sweepRuns: 1000 };
      await env.sync({ streams: STREAMS, tuning });
      const countBefore = env.sim.truth().contacts.length;
      const edits = editContacts(env.sim);
      expect(env.sim.truth().contacts.length).toBe(countBefore);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).not.toEqual([]);

      const run = await env.sync({ streams: STREAMS, tuning });
      const contacts = contactsOf(run);
      expect(contacts.mode).toBe('incremental');
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
      expect(await env.read((w) => customValueDiffs(w, env.sim))).toEqual([]);
      // Each check found its share: the updated-first scan the 25 edits that change updated_at,
      // the membership repair the 20 that do not; the slice re-read 50 contacts and changed none.
      expect(contacts.fresh?.updatedFirst).toMatchObject({ updated: edits.fields.length + edits.customValues.length, orderBroken: false });
      expect(contacts.fresh?.memberships.updated).toBe(edits.tagOnly.length + edits.listOnly.length);
      expect(contacts.fresh?.memberships.deleted).toBe(0);
      expect(contacts.fresh?.slice).toMatchObject({ rows: 50, updated: 0 });
      expect(contacts.updated).toBe(45);
    });
  });

  it('spec mode: no updated_at ordering, so the membership repair and the rolling sweep pick every edit up within --sweep-runs runs', async () => {
    await withSyncEnv({ sim: { contacts: 400, seed: 32 } }, async (env) => {
      const sweepRuns = 4;
      const tuning = { ...SMALL_TUNING, sweepRuns };
      await env.sync({ streams: STREAMS, tuning });
      const edits = editContacts(env.sim, 2);
      const total = edits.fields.length + edits.customValues.length + edits.tagOnly.length + edits.listOnly.length;
      let found = 0;
      let runs = 0;
      const perRun: number[] = [];
      while (runs < sweepRuns) {
        const c = contactsOf(await env.sync({ streams: STREAMS, tuning }));
        runs++;
        expect(c.mode).toBe('incremental');
        // The written interface refuses sort_by=updated_at (400): the scan does not run.
        expect(c.fresh?.updatedFirst).toBeUndefined();
        const n = (c.fresh?.memberships.updated ?? 0) + (c.fresh?.slice?.updated ?? 0);
        perRun.push(n);
        found += n;
        if (c.fresh?.slice?.cycleDone) break;
      }
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
      expect(found, `edits found per run: ${perRun.join(', ')}`).toBe(total);
      expect(runs).toBe(sweepRuns);
      // Tag and list changes come from the counts in the first run; the field edits from the slices.
      expect(perRun[0]).toBeGreaterThanOrEqual(edits.tagOnly.length + edits.listOnly.length);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
      expect(await env.read((w) => customValueDiffs(w, env.sim))).toEqual([]);
    });
  });

  it('membership changes across large tags: the run sweeps instead of re-reading more members than contacts', async () => {
    await withSyncEnv({ sim: { contacts: 300, seed: 34, mode: 'real' } }, async (env) => {
      await env.sync({ streams: STREAMS });
      const truth = env.sim.truth();
      // One subscribed contact gains every tag it lacks: every tag's count moves.
      const c = truth.contacts.find((x) => x.status === 'subscribed' && x.tags.length === 0) ?? truth.contacts.find((x) => x.status === 'subscribed')!;
      for (const t of truth.tags.map((x) => Number(x.id))) if (!c.tags.includes(t)) env.sim.mutate.addTag(c.id, t);
      const contacts = contactsOf(await env.sync({ streams: STREAMS }));
      expect(contacts.mode).toBe('reconcile');
      expect(contacts.fresh?.memberships).toMatchObject({ sweepInstead: true, rows: 0 });
      expect(contacts.fresh?.slice).toBeUndefined();
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
    });
  });

  it('no change: at most 2 contacts requests plus one tags and one lists listing, besides the rolling slice', async () => {
    await withSyncEnv({ sim: { contacts: 400, seed: 33, mode: 'real' } }, async (env) => {
      await env.sync({ streams: STREAMS });
      editContacts(env.sim, 3);
      // The first incremental run probes the ordering (one more request) and remembers it.
      const probed = contactsOf(await env.sync({ streams: ['contacts'] }));
      expect(probed.fresh?.updatedFirst?.requests).toBe(2);
      for (let i = 0; i < 2; i++) {
        env.sim.resetStats();
        const c = contactsOf(await env.sync({ streams: ['contacts'] }));
        const byRoute = env.sim.stats().byRoute;
        const slice = c.fresh?.slice?.requests ?? 0;
        expect(slice).toBeGreaterThan(0);
        expect((byRoute['GET /subscribers'] ?? 0) - slice).toBeLessThanOrEqual(2);
        expect(byRoute['GET /tags']).toBe(1);
        expect(byRoute['GET /lists']).toBe(1);
        expect(c.fresh?.memberships.differing).toEqual([]);
        expect(c.updated + c.inserted + c.deleted).toBe(0);
      }
    });
  });
});
