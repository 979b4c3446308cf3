import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSyncActivities } from '../../activities/sync-activities.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { readContactsState } from '../../src/sync/contacts-state.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { countingCrmClient } from '../helpers/counting-crm-client.js';

// fluentcrm-2.9 sorts by updated_at alone (site-ny README: "There is no tie-breaker"), and a
// database may order tied rows differently for each LIMIT window: the simulator's tiesByWindow.
// A bulk edit gives many contacts one updated_at second, which then spans page boundaries.
// Real DuckDB, the simulator in real mode, a pinned clock.
const ZONE = 'America/New_York';
const PER_PAGE = 20;

async function withScan(
  contacts: number,
  fn: (ctx: {
    sim: RunningSimulator;
    writes: WarehouseOwner;
    tick: (ms: number) => void;
    scan: () => ReturnType<ReturnType<typeof createSyncActivities>['scanUpdatedContacts']>;
    asked: () => number[];
  }) => Promise<void>,
): Promise<void> {
  let t = Date.parse('2026-11-20T15:00:00Z');
  const now = () => t;
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-updated-ties-'));
  const sim = await startSimulator({ contacts, seed: 61, mode: 'real', timezone: ZONE, now, tiesByWindow: true });
  const writes = await openWarehouseOwner({ dbPath: join(dir, 'w.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: ZONE });
  try {
    const { client, rawQueries } = countingCrmClient(sim, ZONE);
    const acts = createSyncActivities({ client, writes, logger: silentLogger, publishEveryMs: 0, now });
    const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 100, loadId: 'L1' });
    await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: scan.lastPage, perPage: 100, expectedTotal: scan.total, loadId: 'L1' });
    await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'L1' });
    let n = 1;
    let from = 0;
    await fn({
      sim,
      writes,
      tick: (ms) => (t += ms),
      scan: () => {
        from = rawQueries.length;
        return acts.scanUpdatedContacts({ perPage: PER_PAGE, loadId: `U${n++}`, overlapMs: 60_000, reprobeAfterMs: 3_600_000 });
      },
      asked: () =>
        rawQueries
          .slice(from)
          .filter((q) => q.orderBy === 'updated_at' && q.order === 'desc')
          .map((q) => q.perPage),
    });
  } finally {
    await writes.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the updated-first scan and contacts sharing an updated_at second', () => {
  it('loads every contact of a bulk edit whose second spans pages, in one run', async () => {
    await withScan(400, async ({ sim, writes, tick, scan, asked }) => {
      tick(10 * 60_000);
      await scan(); // probes the order and sets the watermark
      const ids = sim.truth().contacts.map((c) => c.id);
      tick(10 * 60_000);
      // One second for all 60 (a bulk edit), then three later edits on their own seconds.
      const bulk = ids.slice(100, 160);
      for (const id of bulk) sim.mutate.updateContact(id, { city: 'Bulk edit' });
      for (const id of ids.slice(200, 203)) {
        tick(1_000);
        sim.mutate.updateContact(id, { city: 'Single edit' });
      }
      tick(10 * 60_000);
      const r = await scan();
      expect(await writes.run((w) => w.query(`SELECT count(*)::INT AS n FROM contacts WHERE city = 'Bulk edit'`))).toEqual([{ n: 60 }]);
      expect(await writes.run((w) => w.query(`SELECT count(*)::INT AS n FROM contacts WHERE city = 'Single edit'`))).toEqual([{ n: 3 }]);
      // Each contact counted once, though the group's rows came on several pages and again on its re-read.
      expect(r).toMatchObject({ ran: true, orderBroken: false, rows: 63, updated: 63, tiesReread: 1 });
      // Four pages of 20 (the last one past the cutoff), then one page holding the whole group.
      expect(asked()).toEqual([20, 20, 20, 20, expect.any(Number)]);
      expect((await writes.run(readContactsState)).needsReconcile).toBe(false);
    });
  });

  it('asks the next run to sweep when the group is larger than one page re-reads', async () => {
    await withScan(1_100, async ({ sim, writes, tick, scan }) => {
      tick(10 * 60_000);
      await scan();
      tick(10 * 60_000);
      for (const c of sim.truth().contacts.slice(0, 1_050)) sim.mutate.updateContact(c.id, { city: 'Import' });
      tick(10 * 60_000);
      const r = await scan();
      expect(r).toMatchObject({ ran: true, orderBroken: false, tiesReread: 0 });
      expect((await writes.run(readContactsState)).needsReconcile).toBe(true);
    });
  });
});
