import type { Funnel, ReportSnapshot } from '../src/crm/types.js';
import { inLanes } from '../src/sync/in-lanes.js';
import { readAllPages } from '../src/sync/read-all-pages.js';
import { isRouteMissing, NOT_AVAILABLE, ReportRouteMissingError } from '../src/sync/stream-availability.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

/** Which report routes the CRM has: the interface's (`/reports/overview`, ...) or the plugin's (`/reports/dashboard-stats`, ...). */
export type ReportRoutes = 'interface' | 'plugin';

export interface ReportsResult {
  snapshots: number;
  rows: number;
  requests: number;
  routes?: ReportRoutes;
  /** Set when the CRM has neither kind of report route. */
  skipped?: string;
}

/** `_sync_state['reports']`: the probed kind of routes, so later runs ask the right ones first. */
export const REPORTS_STATE_KEY = 'reports';
interface ReportsState {
  routes: ReportRoutes | null;
  probedAtMs: number;
}

/** Report requests in flight at once; one after another they were most of a sync with nothing to do. */
const REPORT_REQUESTS_AT_ONCE = 4;

const PLUGIN_SERIES = ['subscribers', 'email-sents', 'email-opens', 'email-clicks'] as const;

export function createReportActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  const now = deps.now ?? Date.now;

  return {
    /**
     * One dated snapshot of every report the CRM has, all sharing the run's load time.
     * Interface: overview, subscriber growth, email stats per campaign, conversion stats and the
     * automation step report per funnel. Plugin (fluentcrm-2.9): dashboard stats, the subscriber
     * and email series, and `/funnels/{id}/report` per funnel. Which one is probed once (the
     * remembered kind first) and kept in `_sync_state['reports']`.
     */
    async snapshotReports(input: { loadId: string }): Promise<ReportsResult> {
      const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
      const client = activityClient(deps.client);
      /** The first report of each kind doubles as the probe. */
      const first: Record<ReportRoutes, () => Promise<ReportSnapshot>> = {
        interface: () => client.reports.overview(),
        plugin: () => client.reports.dashboardStats(),
      };
      let requests = 0;
      const hb = startHeartbeats(() => ({ requests }));
      const snapshots: ReportSnapshot[] = [];
      const orMissing = async (fn: () => Promise<ReportSnapshot>): Promise<ReportSnapshot | null> => {
        requests++;
        try {
          return await fn();
        } catch (err) {
          if (isRouteMissing(err)) return null;
          throw err;
        }
      };
      let routes: ReportRoutes | null = null;
      let remembered: ReportRoutes | null = null;
      try {
        remembered = (await writes.run((w) => w.getSyncState<ReportsState>(REPORTS_STATE_KEY)))?.routes ?? null;
        const order: ReportRoutes[] = remembered === 'plugin' ? ['plugin', 'interface'] : ['interface', 'plugin'];
        for (const kind of order) {
          const s = await orMissing(first[kind]);
          if (s) {
            routes = kind;
            snapshots.push(s);
            break;
          }
        }
        if (routes !== remembered) await writes.run((w) => w.setSyncState(REPORTS_STATE_KEY, { routes, probedAtMs: now() } satisfies ReportsState));
        if (!routes) {
          deps.logger.warn('reports are not available on this CRM (neither /reports/overview nor /reports/dashboard-stats exists); skipping');
          return { snapshots: 0, rows: 0, requests, skipped: `${NOT_AVAILABLE} (neither /reports/overview nor /reports/dashboard-stats exists)` };
        }
        const funnels = await listOrEmpty(() => readAllPages(client, (page, perPage) => client.funnels.listPage({ page, perPage })));
        requests += funnels.requests;
        const tasks: [string, () => Promise<ReportSnapshot>][] = [];
        if (routes === 'interface') {
          const campaigns = await readAllPages(client, (page, perPage) => client.campaigns.listPage({ page, perPage, withStats: false }));
          requests += campaigns.requests;
          tasks.push(['/reports/subscriber-growth', () => client.reports.subscriberGrowth()]);
          for (const c of campaigns.rows) tasks.push([`/reports/campaigns/${c.id}/email-stats`, () => client.reports.campaignEmailStats(c.id)]);
          for (const f of funnels.rows) {
            tasks.push([`/reports/funnels/${f.id}/conversion-stats`, () => client.reports.funnelConversionStats(f.id)]);
            tasks.push([`/reports/automations/${f.id}/steps`, () => client.reports.automationSteps(f.id)]);
          }
        } else {
          for (const name of PLUGIN_SERIES) tasks.push([`/reports/${name}`, () => client.reports.series(name)]);
          for (const f of funnels.rows) tasks.push([`/funnels/${f.id}/report`, () => client.reports.funnelReport(f.id)]);
        }
        // Independent requests: a few at once (the client's limiter paces them), kept in task order.
        const kind = routes;
        const rest = await inLanes(tasks, REPORT_REQUESTS_AT_ONCE, async ([route, task]) => {
          hb.throwIfCancelled();
          const s = await orMissing(task);
          if (!s) throw new ReportRouteMissingError(`GET ${route}`, kind);
          hb.beat();
          return s;
        });
        snapshots.push(...rest);
      } finally {
        hb.stop();
      }
      // One transaction of a few statements: a transaction per snapshot held the contacts' writes queued behind it for longer.
      const rows = await writes.run((w) => w.insertReportSnapshots(snapshots, ctx));
      return { snapshots: snapshots.length, rows, requests, routes };
    },
  };
}

/** Funnels of a CRM without the automation module: none, rather than a failed report run. */
async function listOrEmpty(read: () => Promise<{ rows: Funnel[]; requests: number }>): Promise<{ rows: Funnel[]; requests: number }> {
  try {
    return await read();
  } catch (err) {
    if (isRouteMissing(err)) return { rows: [], requests: 1 };
    throw err;
  }
}
