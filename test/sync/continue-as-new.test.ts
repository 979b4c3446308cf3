import { describe, expect, it } from 'vitest';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { SMALL_TUNING, withSyncEnv } from './helpers/sync-env.js';

describe('long scans continue as new', () => {
  it('a contacts scan that outgrows its history budget continues as new and still lands exactly', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 900, seed: 19 } }, async (env) => {
      // 18 pages in ranges of 2 pages: a budget of 30 events forces several continues.
      const result = await env.sync({ streams: ['contacts'], tuning: { ...SMALL_TUNING, maxPagesPerRange: 2, maxHistoryEvents: 30 } });
      expect(result.streams[0]).toMatchObject({ mode: 'backfill', rows: 900, inserted: 900 });
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);

      // The child's latest run was started by a continue-as-new.
      const id = `${env.queues.main}-stream-contacts`;
      const history = await env.client.workflow.getHandle(id).fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      expect(started?.continuedExecutionRunId).toBeTruthy();
      const runs = await env.read((w) => w.query(`SELECT status, pages FROM _sync_runs WHERE stream = 'contacts'`));
      expect(runs).toHaveLength(1);
      expect(runs[0]?.status).toBe('succeeded');
    });
  });
});
