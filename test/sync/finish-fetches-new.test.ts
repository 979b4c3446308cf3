import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSyncActivities } from '../../activities/sync-activities.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import { openWarehouseOwner } from '../../src/warehouse/index.js';
import { countingCrmClient } from '../helpers/counting-crm-client.js';
import { holdOwner } from '../helpers/hold-owner.js';

// The end of a scan asks for the newest page once: it is the finish's probe (has the CRM changed
// since the scan began?) and the first page of the contacts created meanwhile, requested while
// the scan's last lake buckets are published. The simulator in real mode, real DuckDB.
const ZONE = 'America/New_York';
const PER_PAGE = 25;

describe('the end of a contact scan', () => {
  // At a page size above the newest rows' head (25 rows), the probe is that head: with up to 25
  // new contacts it holds them all; with more, the new ones are read from page 1 at the page size.
  it.each([
    { created: 7, perPage: PER_PAGE, pages: 1, asked: [25] },
    { created: 30, perPage: PER_PAGE, pages: 2, asked: [25, 25] },
    { created: 7, perPage: 100, pages: 1, asked: [25] },
    { created: 30, perPage: 100, pages: 1, asked: [25, 100] },
  ])('loads the $created contacts created during the scan, pages of $perPage, with the probe as their first request', async ({ created, perPage, pages, asked }) => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-finish-new-'));
    const sim = await startSimulator({ contacts: 120, seed: 61, mode: 'real', timezone: ZONE });
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'w.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: ZONE });
    try {
      const { client, calls, rawPerPage } = countingCrmClient(sim, ZONE);
      const acts = createSyncActivities({ client, writes, logger: silentLogger, publishEveryMs: 0 });
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: PER_PAGE, loadId: 'L1' });
      await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: scan.lastPage, perPage: PER_PAGE, expectedTotal: scan.total, loadId: 'L1' });
      for (let i = 0; i < created; i++) sim.mutate.createContact({ email: `during-scan-${i}@example.com`, status: 'subscribed', first_name: `During${i}` });

      const before = { ...calls, asked: rawPerPage.length };
      const fin = await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'L1', fetchNew: { perPage } });

      expect(fin.fresh).toBeDefined();
      expect(fin.fresh!.rows).toBe(created);
      expect(fin.fresh!.pages).toBe(pages);
      expect(fin.fresh!.crmTotal).toBe(120 + created);
      expect(fin.fresh!.liveCount).toBe(120 + created);
      // The scan saw the CRM change under it (its highest id moved): the flow sweeps once more.
      expect(fin.drift).toBe(true);
      // One request for the probe and the first rows together; more only when needed.
      expect(fin.requests).toBe(1);
      expect(fin.fresh!.requests).toBe(asked.length - 1);
      expect({ parsed: calls.parsed - before.parsed, raw: calls.raw - before.raw }).toEqual({ parsed: 0, raw: asked.length });
      expect(rawPerPage.slice(before.asked)).toEqual(asked);
      const held = await writes.run((w) => w.maxContactId());
      expect(held).toBe(Math.max(...sim.truth().contacts.map((c) => c.id)));

      // Asked again (its result lost to a crash), the finish finds nothing new and writes nothing
      // twice, from the head alone.
      const askedBefore = rawPerPage.length;
      const again = await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'L1', fetchNew: { perPage } });
      expect(again.fresh!.rows).toBe(0);
      expect(rawPerPage.slice(askedBefore)).toEqual([25]);
      expect(again.fresh!.liveCount).toBe(120 + created);
    } finally {
      await writes.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('asks for the newest page as it starts, while the warehouse is still busy; again after confirmations, when there are any', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-finish-new-'));
    const sim = await startSimulator({ contacts: 60, seed: 62, mode: 'real', timezone: ZONE });
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'w.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: ZONE });
    try {
      const { client, calls } = countingCrmClient(sim, ZONE);
      const acts = createSyncActivities({ client, writes, logger: silentLogger, publishEveryMs: 0 });
      const scanAll = async (mode: 'backfill' | 'reconcile') => {
        const scan = await acts.startContactsScan({ mode, perPage: PER_PAGE, loadId: mode });
        await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: scan.lastPage, perPage: PER_PAGE, expectedTotal: scan.total, loadId: mode });
        return scan.scanKey;
      };
      const backfill = await scanAll('backfill');

      // The warehouse busy with another job: the probe goes out all the same.
      const busy = holdOwner(writes);
      await busy.began;
      const before = calls.raw;
      const fin = acts.finishContactsScan({ scanKey: backfill, loadId: 'backfill', fetchNew: { perPage: PER_PAGE } });
      for (let i = 0; i < 200 && calls.raw === before; i++) await new Promise((r) => setTimeout(r, 25));
      const sentWhileBusy = calls.raw - before;
      await busy.release();
      expect(sentWhileBusy).toBe(1);
      expect((await fin).requests).toBe(1);
      expect(calls.raw - before).toBe(1);

      // A contact deleted before a reconcile is a candidate the finish confirms (gone): the probe
      // asked at the start is dropped, and the one after the confirmation decides.
      sim.mutate.deleteContact(5);
      const reconcile = await scanAll('reconcile');
      const atFinish = calls.raw;
      const fin2 = await acts.finishContactsScan({ scanKey: reconcile, loadId: 'reconcile', fetchNew: { perPage: PER_PAGE } });
      expect(fin2.deleted).toBe(1);
      expect(fin2.drift).toBe(false);
      expect(fin2.requests).toBe(3); // the dropped probe, the confirmation, the probe after it
      expect(calls.raw - atFinish).toBe(2);
      expect(fin2.fresh!.liveCount).toBe(59);
    } finally {
      await writes.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
