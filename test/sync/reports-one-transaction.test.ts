import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReportActivities } from '../../activities/sync-reports.js';
import { createCrmClient, type CrmClient } from '../../src/crm/index.js';
import { createRateLimiter } from '../../src/crm/rate-limiter.js';
import type { ReportSnapshot } from '../../src/crm/types.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import type { SyncCrmClient } from '../../src/sync/crm-port.js';
import type { WriteJobs } from '../../src/sync/warehouse-port.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { REPORT_TABLES } from '../../src/warehouse/report-snapshots.js';
import { closeTempWarehouse, openTempWarehouse, type tempPaths } from '../warehouse/temp-warehouse.js';

let sim: RunningSimulator;
let real: CrmClient;
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  sim = await startSimulator({ seed: 16, contacts: 40 });
  real = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, limiter: createRateLimiter({ maxRps: 1000, adaptive: false }) });
  ({ p, w } = await openTempWarehouse());
});
afterAll(async () => {
  await real?.close();
  await sim?.close();
  await closeTempWarehouse({ p, w });
});

const writes: WriteJobs = { run: (job) => job(w) };
/** Snapshots held: each lands in exactly one report_* table. */
const snapshotCount = async (): Promise<number> => Number((await w.query(`SELECT ${REPORT_TABLES.map((t) => `(SELECT count(*) FROM ${t})`).join(' + ')} AS n`))[0]?.n);

/**
 * A report run's snapshots land in the warehouse together (one transaction, a few statements):
 * written one per transaction they held the single writer, and the contacts' writes queued behind
 * it, for most of a sync with nothing to do, and a failure part-way left half a run's snapshots.
 */
describe('snapshotReports writes', () => {
  it('every snapshot of a run, or none when one of them cannot be stored', { timeout: 60_000 }, async () => {
    const acts = createReportActivities({ client: real, writes, logger: silentLogger });
    const ok = await acts.snapshotReports({ loadId: 'run-1:reports' });
    expect(ok.snapshots).toBeGreaterThan(5);
    expect(await snapshotCount()).toBe(ok.snapshots);
    const steps = Number((await w.query(`SELECT count(*) AS n FROM report_automation_step_rows`))[0]?.n);
    expect(steps).toBeGreaterThan(0);

    // The last funnel's step report is over the size limit: it is refused, and so is the rest of the run.
    const funnels = (await real.funnels.listPage({ page: 1, perPage: 100 })).items;
    const last = funnels.at(-1)!.id;
    const oversized: SyncCrmClient = {
      ...real,
      reports: {
        ...real.reports,
        automationSteps: async (id: number): Promise<ReportSnapshot> => {
          const s = await real.reports.automationSteps(id);
          return id === last ? { ...s, data: { ...(s.data as object), padding: 'x'.repeat(17 << 20) } } : s;
        },
      },
    };
    const failing = createReportActivities({ client: oversized, writes, logger: silentLogger });
    await expect(failing.snapshotReports({ loadId: 'run-2:reports' })).rejects.toThrow(/limit/);
    expect(await snapshotCount()).toBe(ok.snapshots);
    expect(await w.query(`SELECT count(*) AS n FROM report_automation_step_rows`)).toEqual([{ n: steps }]);
  });
});
