import { describe, expect, it } from 'vitest';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { SMALL_TUNING, withSyncEnv } from './helpers/sync-env.js';
import type { StreamName } from '../../workflows/streams.js';
import { readContactsState } from '../../src/sync/contacts-state.js';

const STREAMS: StreamName[] = ['contacts', 'tags', 'lists', 'custom_fields'];

describe('sync under faults and churn', () => {
  it('is exact with 5% server errors, a 429 storm and truncated bodies', async () => {
    await withSyncEnv({ sim: { contacts: 1000, seed: 21, faults: { errorRate: 0.05, truncateRate: 0.03, rateLimitRps: 8 } } }, async (env) => {
      // The server allows 8 requests/s: the client starts above that, so it meets a burst of 429s
      // and has to learn the limit; 5xx and truncation run throughout. Small pages give enough
      // requests (~55) for every fault to show.
      const result = await env.sync({ streams: STREAMS, tuning: { ...SMALL_TUNING, perPage: 20, parallelism: 4 } });
      expect(result.failed).toEqual([]);
      const stats = env.sim.stats();
      // The faults really happened: otherwise this test proves nothing.
      expect(stats.status5xx).toBeGreaterThan(0);
      expect(stats.status429).toBeGreaterThan(0);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), STREAMS))).toEqual([]);
    });
  });

  it('converges on the run after a backfill that churn ran through', async () => {
    await withSyncEnv({ sim: { contacts: 450, seed: 33, faults: { latencyMs: { min: 10, max: 20 } } } }, async (env) => {
      // Churn through the whole backfill (capped, so the test stops by itself).
      const churn = env.sim.churn({ insertsPerSec: 8, updatesPerSec: 8, deletesPerSec: 4 });
      const stopChurn = setTimeout(() => {
        churn.stop().catch(() => undefined); // the finally below stops it again and reports a failure
      }, 20_000);
      let during;
      try {
        during = await env.sync({ streams: ['contacts'] });
      } finally {
        clearTimeout(stopChurn);
        await churn.stop();
      }
      const counts = churn.counts();
      expect(counts.inserts + counts.deletes).toBeGreaterThan(0);
      expect(during.streams[0]?.drift).toBe(true);
      // The summary says the next run reconciles exactly when the run left that to it.
      const { needsReconcile } = await env.read(readContactsState);
      expect(during.streams[0]?.reconcileNext ?? false).toBe(needsReconcile);
      await env.sync({ streams: ['contacts'] });
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);
      // And a run with nothing new is incremental again.
      const quiet = await env.sync({ streams: ['contacts'] });
      expect(quiet.streams[0]).toMatchObject({ mode: 'incremental', drift: false });
    });
  });
});
