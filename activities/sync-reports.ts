import type { ReportSnapshot } from '../src/crm/types.js';
import { readAllPages } from '../src/sync/read-all-pages.js';
import { startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface ReportsResult {
  snapshots: number;
  rows: number;
  requests: number;
}

export function createReportActivities(deps: SyncActivityDeps) {
  const { client, writes } = deps;
  const now = deps.now ?? Date.now;

  return {
    /**
     * One dated snapshot of every report: overview, subscriber growth, email stats per campaign,
     * conversion stats and the automation step report per funnel. All share the run's load time.
     */
    async snapshotReports(input: { loadId: string }): Promise<ReportsResult> {
      const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
      let requests = 0;
      const hb = startHeartbeats(() => ({ requests }));
      const snapshots: ReportSnapshot[] = [];
      try {
        const campaigns = await readAllPages((page, perPage) => client.campaigns.listPage({ page, perPage, withStats: false }));
        const funnels = await readAllPages((page, perPage) => client.funnels.listPage({ page, perPage }));
        requests += campaigns.requests + funnels.requests;
        const tasks: (() => Promise<ReportSnapshot>)[] = [
          () => client.reports.overview(),
          () => client.reports.subscriberGrowth(),
          ...campaigns.rows.map((c) => () => client.reports.campaignEmailStats(c.id)),
          ...funnels.rows.flatMap((f) => [() => client.reports.funnelConversionStats(f.id), () => client.reports.automationSteps(f.id)]),
        ];
        for (const task of tasks) {
          hb.throwIfCancelled();
          snapshots.push(await task());
          requests++;
          hb.beat();
        }
      } finally {
        hb.stop();
      }
      const rows = await writes.run(async (w) => {
        let n = 0;
        for (const s of snapshots) n += await w.insertReportSnapshot(s, ctx);
        return n;
      });
      return { snapshots: snapshots.length, rows, requests };
    },
  };
}
