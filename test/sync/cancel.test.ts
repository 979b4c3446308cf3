import { describe, expect, it } from 'vitest';
import { readContactsState } from '../../src/sync/contacts-state.js';
import { runSync } from '../../src/sync/run-sync.js';
import { SyncCancelledError } from '../../src/sync/sync-errors.js';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { SMALL_TUNING, withSyncEnv } from './helpers/sync-env.js';

describe('cancelling a sync', () => {
  it('stops cleanly, records the run as cancelled, and the next run resumes the scan', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 1500, seed: 13, faults: { latencyMs: { min: 40, max: 60 } } } }, async (env) => {
      const abort = new AbortController();
      const watch = setInterval(() => {
        if ((env.sim.stats().byRoute['GET /subscribers'] ?? 0) >= 8) abort.abort();
      }, 10);
      const first = runSync({ client: env.client, taskQueues: env.queues, input: { streams: ['contacts', 'tags'], tuning: SMALL_TUNING }, signal: abort.signal });
      await expect(first).rejects.toBeInstanceOf(SyncCancelledError);
      clearInterval(watch);

      const runs = await env.read((w) => w.query(`SELECT stream, status FROM _sync_runs ORDER BY stream`));
      expect(runs.find((r) => r.stream === 'contacts')?.status).toBe('cancelled');
      const state = await env.read(readContactsState);
      expect(state.activeScan?.mode).toBe('backfill');
      const loadedBefore = await env.read((w) => w.query(`SELECT count(*) AS n FROM _sync_scan_pages`));
      expect(Number(loadedBefore[0]?.n)).toBeGreaterThan(0);
      // Stopped means stopped: once the run reports cancelled, no activity fetches or loads more.
      const requestsAtCancel = env.sim.stats().byRoute['GET /subscribers'];
      await new Promise((r) => setTimeout(r, 1_500));
      expect(env.sim.stats().byRoute['GET /subscribers']).toBe(requestsAtCancel);
      const loadedLater = await env.read((w) => w.query(`SELECT count(*) AS n FROM _sync_scan_pages`));
      expect(Number(loadedLater[0]?.n)).toBe(Number(loadedBefore[0]?.n));

      const second = await env.sync({ streams: ['contacts'] });
      const contacts = second.streams[0]!;
      expect(contacts.mode).toBe('backfill');
      // Resumed: the pages loaded before the cancel were not loaded again (the one extra page is
      // the newest-first check for contacts created during the scan).
      expect(contacts.pages).toBe(30 - Number(loadedBefore[0]?.n) + 1);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);
    });
  });
});
