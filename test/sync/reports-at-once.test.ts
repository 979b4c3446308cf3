import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReportActivities } from '../../activities/sync-reports.js';
import { createCrmClient } from '../../src/crm/index.js';
import { createRateLimiter } from '../../src/crm/rate-limiter.js';
import type { ReportSnapshot } from '../../src/crm/types.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import type { SyncCrmClient } from '../../src/sync/crm-port.js';
import type { WarehouseSession } from '../../src/sync/warehouse-port.js';
import type { WriteJobs } from '../../src/sync/warehouse-port.js';

let sim: RunningSimulator;
beforeAll(async () => {
  // Slow reports: one after another, each waits for the last; at once, they overlap.
  sim = await startSimulator({ seed: 16, contacts: 40, faults: { slowReportsMs: 300 } });
});
afterAll(async () => {
  await sim?.close();
});

/** The report calls of a real client on the simulator, counting how many are in flight at once. */
function countingClient(client: SyncCrmClient): { client: SyncCrmClient; mostAtOnce: () => number; calls: () => number } {
  let inFlight = 0;
  let most = 0;
  let calls = 0;
  const reports = Object.fromEntries(
    Object.entries(client.reports).map(([name, fn]) => [
      name,
      async (...args: unknown[]): Promise<ReportSnapshot> => {
        calls++;
        most = Math.max(most, ++inFlight);
        try {
          return await (fn as (...a: unknown[]) => Promise<ReportSnapshot>).apply(client.reports, args);
        } finally {
          inFlight--;
        }
      },
    ]),
  ) as unknown as SyncCrmClient['reports'];
  return { client: { ...client, reports } as SyncCrmClient, mostAtOnce: () => most, calls: () => calls };
}

/** A stand-in for the warehouse side: the reports' state key and the snapshots in insert order. */
function memoryWrites(): { writes: WriteJobs; inserted: ReportSnapshot[] } {
  const state = new Map<string, unknown>();
  const inserted: ReportSnapshot[] = [];
  const session = {
    getSyncState: async (key: string) => state.get(key),
    setSyncState: async (key: string, value: unknown) => void state.set(key, value),
    insertReportSnapshots: async (s: readonly ReportSnapshot[]) => {
      inserted.push(...s);
      return s.length;
    },
  } as unknown as WarehouseSession;
  return { writes: { run: (job) => job(session) } as WriteJobs, inserted };
}

describe('snapshotReports', () => {
  it('asks the independent report routes several at once and keeps their order', { timeout: 60_000 }, async () => {
    const real = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, limiter: createRateLimiter({ maxRps: 1000, adaptive: false }) });
    try {
      const counting = countingClient(real);
      const { writes, inserted } = memoryWrites();
      const acts = createReportActivities({ client: counting.client, writes, logger: silentLogger });
      const first = await acts.snapshotReports({ loadId: 'run-1:reports' });
      expect(first.routes).toBe('interface');
      expect(first.snapshots).toBe(counting.calls());
      expect(first.snapshots).toBeGreaterThan(5);
      expect(counting.mostAtOnce()).toBeGreaterThanOrEqual(2);

      // In the order of the tasks, whichever answered first: the probe, growth, per campaign, per funnel.
      const campaigns = (await real.campaigns.listPage({ page: 1, perPage: 100, withStats: false })).items;
      const funnels = (await real.funnels.listPage({ page: 1, perPage: 100 })).items;
      expect(inserted.map((s) => [s.report, s.params])).toEqual([
        ['overview', {}],
        ['subscriber_growth', {}],
        ...campaigns.map((c) => ['campaign_email_stats', { campaign_id: c.id }]),
        ...funnels.flatMap((f) => [
          ['funnel_conversion_stats', { funnel_id: f.id }],
          ['automation_steps', { funnel_id: f.id }],
        ]),
      ]);
    } finally {
      await real.close();
    }
  });
});
