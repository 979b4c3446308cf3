import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSyncActivities } from '../../activities/sync-activities.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import { readContactsState } from '../../src/sync/contacts-state.js';
import { openWarehouseOwner } from '../../src/warehouse/index.js';
import { countingCrmClient } from '../helpers/counting-crm-client.js';

// The updated-first scan re-reads its overlap every run. When the last run found few rows past
// its cutoff, the next asks 25 rows first; after a busier one, a full page. The simulator in
// real mode (sort_by=updated_at as captured), real DuckDB, a pinned clock.
const ZONE = 'America/New_York';
const PER_PAGE = 100;

describe('the updated-first scan after a quiet run', () => {
  it('asks 25 rows first when the last run found fewer past its cutoff, and a full page after a busier one', async () => {
    let t = Date.parse('2026-11-20T15:00:00Z');
    const now = () => t;
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-updated-head-'));
    const sim = await startSimulator({ contacts: 300, seed: 45, mode: 'real', timezone: ZONE, now });
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'w.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: ZONE });
    try {
      const { client, rawQueries } = countingCrmClient(sim, ZONE);
      const acts = createSyncActivities({ client, writes, logger: silentLogger, publishEveryMs: 0, now });
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: PER_PAGE, loadId: 'L1' });
      await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: scan.lastPage, perPage: PER_PAGE, expectedTotal: scan.total, loadId: 'L1' });
      await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'L1' });
      const ids = sim.truth().contacts.map((c) => c.id);
      const run = async (loadId: string) => {
        const from = rawQueries.length;
        const r = await acts.scanUpdatedContacts({ perPage: PER_PAGE, loadId, overlapMs: 60_000, reprobeAfterMs: 3_600_000 });
        const asked = rawQueries
          .slice(from)
          .filter((q) => q.orderBy === 'updated_at' && q.order === 'desc')
          .map((q) => q.perPage);
        return { r, asked, window: (await writes.run(readContactsState)).updatedWindowRows };
      };

      t += 10 * 60_000;
      for (const id of ids.slice(0, 3)) sim.mutate.updateContact(id, { first_name: 'Quiet edit' });
      t += 10 * 60_000;
      // No count from a run before: a full first page (also the probe's first half).
      const first = await run('L2');
      expect(first.asked).toEqual([PER_PAGE]);
      expect(first.r).toMatchObject({ ran: true, probed: true, rows: 3, updated: 3 });
      expect(first.window).toBe(3);

      // Nothing changed since: the same three rows are in the overlap, from a head of 25.
      t += 10 * 60_000;
      const quiet = await run('L3');
      expect(quiet.asked).toEqual([25]);
      expect(quiet.r).toMatchObject({ ran: true, probed: false, rows: 3, updated: 0 });

      // Forty edits: the head is all past the cutoff, so page 1 is read at the page size.
      for (const id of ids.slice(10, 50)) sim.mutate.updateContact(id, { city: 'Busy edit' });
      t += 10 * 60_000;
      const busy = await run('L4');
      expect(busy.asked).toEqual([25, PER_PAGE]);
      // It reads back to the last watermark less the overlap: the three quiet edits are read again.
      expect(busy.r).toMatchObject({ rows: 43, updated: 40 });
      expect(busy.window).toBe(43);
      // After a busy run, a full page first again.
      t += 10 * 60_000;
      expect((await run('L5')).asked).toEqual([PER_PAGE]);
      expect(await writes.run((w) => w.query(`SELECT count(*) AS n FROM contacts WHERE city = 'Busy edit'`))).toEqual([{ n: 40 }]);
    } finally {
      await writes.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
