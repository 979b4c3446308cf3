import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createContactActivities } from '../../activities/sync-contacts.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { WarehouseSession } from '../../src/sync/warehouse-port.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { countingCrmClient } from '../helpers/counting-crm-client.js';
import { spyMethods } from '../helpers/spy-methods.js';

/** `owner` with the first contact load held until `firstLoad` settles, and each typing aside noted in `asides`. */
function watchedOwner(owner: WarehouseOwner, firstLoad: Promise<void>, asides: string[]): WarehouseOwner {
  let loads = 0;
  const spy = (w: WarehouseSession): WarehouseSession =>
    spyMethods(w, {
      loadContactPages: async (fn, ...a) => {
        if (loads++ === 0) await firstLoad;
        return fn(...a);
      },
      typeContactPagesAside: (fn, ...a) => {
        asides.push((a[0] as { page: number }[]).map((p) => p.page).join(','));
        return fn(...a);
      },
    });
  return {
    dbPath: owner.dbPath,
    get pending() {
      return owner.pending;
    },
    run: (job) => owner.run((w) => job(spy(w) as typeof w)),
    close: () => owner.close(),
  };
}

/** Waits (up to 20 s, in steps of 10 ms: a busy machine) until `done()`. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/**
 * Four ranges of a backfill through the activities (called directly), the first load held so a
 * full load's pages wait behind it: the activities' `typeAside` (CRMSYNC_SYNC_TYPE_ASIDE) decides
 * whether those pages are typed aside meanwhile.
 */
describe.each([
  ['on', true],
  ['off', false],
] as const)('a contact scan with typing aside %s (simulator, real DuckDB)', (_, typeAside) => {
  it(typeAside ? 'types the waiting load aside while the first one is held, and loads every contact' : 'types no load aside, and loads every contact', async () => {
    const sim = await startSimulator({ contacts: 12_000, seed: 9 });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-scan-aside-'));
    const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    try {
      const { client, calls } = countingCrmClient(sim, 'UTC');
      let open = (): void => undefined;
      const firstLoad = new Promise<void>((r) => (open = r));
      const asides: string[] = [];
      const acts = createContactActivities({ client, writes: watchedOwner(owner, firstLoad, asides), logger: silentLogger, publishEveryMs: 0, typeAside });
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 500, loadId: 'L1' });
      expect(scan.lastPage).toBe(24);
      const probes = calls.raw;
      const ranges = [1, 7, 13, 19].map((from) => acts.syncContactPages({ scanKey: scan.scanKey, fromPage: from, toPage: from + 5, perPage: 500, expectedTotal: scan.total, loadId: 'L1' }));
      // With the first load held, the ranges fetch until the sink's budget (10,000 rows) is full:
      // the first load and a full load (5,000 rows) waiting behind it.
      await until(() => calls.raw - probes >= 20 && (!typeAside || asides.length > 0));
      expect(asides.length > 0).toBe(typeAside);
      open();
      const results = await Promise.all(ranges);
      expect(results.reduce((n, r) => n + r.pages, 0)).toBe(24);
      expect(await owner.run((w) => w.query('SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts'))).toEqual([{ n: 12_000, d: 12_000 }]);
      if (!typeAside) expect(asides).toEqual([]);
    } finally {
      await owner.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
