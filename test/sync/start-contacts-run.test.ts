import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createContactsStartActivities } from '../../activities/sync-contacts-start.js';
import { createCrmClient } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { SyncCrmClient } from '../../src/sync/crm-port.js';
import { openWarehouseOwner } from '../../src/warehouse/index.js';

/**
 * A backfill's first activity plans the run and starts its scan (one activity and one workflow
 * task less before the first range). Its probe overlaps the clearing of the last scan's page log;
 * a retry after the scan was written resumes that scan instead of starting another.
 */
describe('startContactsRun with startScan (simulator, real DuckDB)', () => {
  it.each(['spec', 'real'] as const)('starts the scan with the plan, and a retry resumes it without a second probe (%s mode)', async (mode) => {
    const sim = await startSimulator({ contacts: 300, seed: 12, mode });
    const real = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-start-'));
    const asked: string[] = [];
    const client = {
      ...real,
      contacts: {
        ...real.contacts,
        listPage: (q: { page: number; perPage: number; order?: string }) => {
          asked.push(`page ${q.page} of ${q.perPage} ${q.order ?? ''}`.trim());
          return real.contacts.listPage(q as Parameters<typeof real.contacts.listPage>[0]);
        },
      },
    } as unknown as SyncCrmClient;
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    try {
      // The page log of a scan that ended long ago.
      await writes.run((w) => w.query(`INSERT INTO _sync_scan_pages (scan_key, page, row_count, reported_total, loaded_at) VALUES ('old-scan', 1, 20, 300, now())`));
      const acts = createContactsStartActivities({ client, writes, logger: silentLogger });
      const input = { full: false, reconcile: 'auto' as const, reconcileEveryMs: 86_400_000, perPage: 20, loadId: 'L1', overlapMs: 0, sweepRuns: 7 };

      const first = await acts.startContactsRun({ ...input, startScan: true });
      expect(first.plan).toMatchObject({ mode: 'backfill', resumeScan: false });
      expect(first.scan).toMatchObject({ mode: 'backfill', total: 300, lastPage: 15, perPage: 20, crmTotalAtStart: 300, maxIdAtStart: 0, donePages: [], resumed: false, requests: 1 });
      expect(asked).toEqual(['page 1 of 1 desc']);
      expect(await writes.run((w) => w.query(`SELECT count(*) AS n FROM _sync_scan_pages`))).toEqual([{ n: 0 }]);

      // The activity retried after it wrote the scan: the plan finds the scan and resumes it.
      const retried = await acts.startContactsRun({ ...input, startScan: true });
      expect(retried.plan).toMatchObject({ mode: 'backfill', resumeScan: true });
      expect(retried.scan).toMatchObject({ scanKey: first.scan!.scanKey, lastPage: 15, resumed: true, requests: 0 });
      expect(asked).toHaveLength(1);

      // Workflows started before startScan existed: the plan alone; they start the scan themselves.
      const planOnly = await acts.startContactsRun(input);
      expect(planOnly.scan).toBeUndefined();
      expect(asked).toHaveLength(1);
    } finally {
      await writes.close();
      await real.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
