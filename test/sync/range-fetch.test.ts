import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createContactActivities } from '../../activities/sync-contacts.js';
import { createCrmClient } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { SyncCrmClient } from '../../src/sync/crm-port.js';
import { openWarehouseOwner, type WarehouseHandle } from '../../src/warehouse/index.js';
import { holdOwner } from '../helpers/hold-owner.js';

/**
 * One range activity, called directly (no worker): where the CRM sets the pace it keeps four page
 * requests in flight, so the client's request slots stay busy while other ranges wait for their
 * last loads (two where it cannot tell, so pages do not pile up in memory); when a request
 * fails, nothing of the attempt goes on after it has failed; a first attempt fetches without
 * waiting its turn at the owner, and a retry reads the page log first.
 */
describe('syncContactPages (one range, simulator, real DuckDB)', () => {
  it('keeps two requests in flight until the CRM is seen to set the pace, then four; loads every page exactly; stops every lane on a failure', async () => {
    const sim = await startSimulator({ contacts: 300, seed: 5 });
    const real = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-range-'));
    let inFlight = 0;
    let maxInFlight = 0;
    let failPage = 0;
    const started: { page: number; at: number }[] = [];
    /** The fetch as the activity makes it (parsed or raw), slowed, counted and failed on `failPage`. */
    const watched =
      <Q extends { page: number }, R>(fetch: (q: Q) => Promise<R>) =>
      async (opts: Q): Promise<R> => {
        started.push({ page: opts.page, at: performance.now() });
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          await new Promise((r) => setTimeout(r, 15));
          if (opts.page === failPage) throw new Error(`page ${opts.page} failed`);
          return await fetch(opts);
        } finally {
          inFlight--;
        }
      };
    const client = {
      ...real,
      contacts: { ...real.contacts, listPage: watched(real.contacts.listPage), listPageRaw: watched(real.contacts.listPageRaw) },
    } as unknown as SyncCrmClient;
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    try {
      let clock = 0;
      const acts = createContactActivities({ client, writes, logger: silentLogger, now: () => clock });
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 20, loadId: 'L1' });
      expect(scan.lastPage).toBe(15);
      started.length = 0; // the scan's probe
      const range = { scanKey: scan.scanKey, perPage: 20, expectedTotal: 300, loadId: 'L1' };

      // A scan's first range: the sink cannot tell yet whether the CRM or the writer sets the pace.
      const r = await acts.syncContactPages({ ...range, fromPage: 1, toPage: 6 });
      expect(maxInFlight).toBe(2);
      expect(r).toMatchObject({ pages: 6, rows: 120, pagesLoadedNow: 6, requests: 6, inserted: 120, drift: false });
      // Fetchers have gone on without waiting for room for the sink's keepUpMs (5 s): four.
      clock = 5_000;
      maxInFlight = 0;
      const last = await acts.syncContactPages({ ...range, fromPage: 7, toPage: 10 });
      expect(maxInFlight).toBe(4);
      expect(last).toMatchObject({ pages: 4, rows: 80, pagesLoadedNow: 4, requests: 4, inserted: 80, drift: false });
      expect(started.map((s) => s.page).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      const loaded = await writes.run((w) => w.query('SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM contacts'));
      expect(loaded).toEqual([{ n: 200, lo: 1, hi: 200 }]);

      // A failing request fails the range; the other lanes' requests are the last of the attempt.
      started.length = 0;
      failPage = 11;
      const failed = acts.syncContactPages({ ...range, fromPage: 11, toPage: 15 });
      await expect(failed).rejects.toThrow('page 11 failed');
      const failedAt = performance.now();
      expect(inFlight).toBe(0);
      await new Promise((r) => setTimeout(r, 100));
      expect(started.filter((s) => s.at > failedAt)).toEqual([]);
      // The first four went out together; the fifth would have followed an answer.
      expect(started.length).toBeLessThanOrEqual(4);

      // The retry loads what is left, and pages already durable are not fetched again.
      failPage = 0;
      const durable = await writes.run((w) => w.query(`SELECT list(page ORDER BY page) AS p FROM _sync_scan_pages WHERE scan_key = $1 AND page > 10`, [scan.scanKey]));
      started.length = 0;
      const retry = await acts.syncContactPages({ ...range, fromPage: 11, toPage: 15 });
      expect(retry).toMatchObject({ pages: 5, rows: 100 });
      const before = ((durable[0]?.p as number[] | null) ?? []).map(Number);
      expect(started.map((s) => s.page).filter((p) => before.includes(p))).toEqual([]);
      const all = await writes.run((w) => w.query('SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts'));
      expect(all).toEqual([{ n: 300, d: 300 }]);
    } finally {
      await writes.close();
      await real.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("loads a range's last pages at its end, without waiting out the sink's linger, in one load", async () => {
    const sim = await startSimulator({ contacts: 60, seed: 9 });
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-range-'));
    const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    let pageLoads = 0;
    const writes = {
      run: <T>(job: (w: WarehouseHandle) => Promise<T>) =>
        owner.run((w) =>
          job(
            new Proxy(w, {
              get(target, prop) {
                const value = Reflect.get(target, prop) as unknown;
                if (prop === 'loadContactPages') pageLoads++;
                return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
              },
            }),
          ),
        ),
      get pending() {
        return owner.pending;
      },
    };
    try {
      // Pages of 20 rows, far under a load's minimum; a linger of ten minutes: without the range's
      // flush this test would time out.
      const acts = createContactActivities({ client, writes, logger: silentLogger, contactLingerMs: 600_000 });
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 20, loadId: 'L1' });
      const r = await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: 3, perPage: 20, expectedTotal: 60, loadId: 'L1' });
      expect(r).toMatchObject({ pages: 3, rows: 60, pagesLoadedNow: 3, inserted: 60 });
      expect(pageLoads).toBe(1);
      // Page 3 ends the listing (its total says so): the bucket of its ids goes to the lake now,
      // without waiting for the scan's finish or for a page 4.
      for (let i = 0; i < 200 && owner.pending > 0; i++) await new Promise((res) => setTimeout(res, 25));
      const inLake = await owner.run((w) => w.query(`SELECT count(*) AS n FROM read_parquet('${join(dir, 'lake')}/contacts/**/*.parquet')`));
      expect(Number(inLake[0]!.n)).toBe(60);
    } finally {
      await owner.close();
      await client.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(['spec', 'real'] as const)("publishes the bucket the listing's last page ends, and not on a page a capping server shortened (%s mode)", async (mode) => {
    for (const perPageCap of [undefined, 10]) {
      // Asked for 20 a page; capped, served 10: page 3 then holds ids 21-30, not the last of the 60.
      const sim = await startSimulator({ contacts: 60, seed: 9, mode, ...(perPageCap ? { perPageCap } : {}) });
      const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
      const dir = await mkdtemp(join(tmpdir(), 'crmsync-range-'));
      const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
      try {
        const acts = createContactActivities({ client, writes: owner, logger: silentLogger });
        const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 20, loadId: 'L1' });
        const r = await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: 3, perPage: 20, expectedTotal: 60, loadId: 'L1' });
        expect(r).toMatchObject({ pages: 3, rows: perPageCap ? 30 : 60 });
        for (let i = 0; i < 200 && owner.pending > 0; i++) await new Promise((res) => setTimeout(res, 25));
        // Capped, ids 31-60 may still come (the scan's finish looks for them): their bucket waits.
        expect(existsSync(join(dir, 'lake', 'contacts'))).toBe(!perPageCap);
      } finally {
        await owner.close();
        await client.close();
        await sim.close();
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('a first attempt fetches while the owner is busy; a retry reads the page log first', async () => {
    const sim = await startSimulator({ contacts: 60, seed: 11 });
    const real = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-range-'));
    const fetched: number[] = [];
    /** The client as the activity sees it (in an activity it asks for one bound to its cancellation), counting page requests. */
    const counted = (c: typeof real): SyncCrmClient =>
      ({
        ...c,
        withSignal: (signal: AbortSignal) => counted(c.withSignal(signal)),
        contacts: {
          ...c.contacts,
          listPageRaw: (q: Parameters<typeof c.contacts.listPageRaw>[0]) => {
            fetched.push(q.page ?? 0);
            return c.contacts.listPageRaw(q);
          },
        },
      }) as unknown as SyncCrmClient;
    const client = counted(real);
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    const until = async (check: () => boolean): Promise<void> => {
      for (let waited = 0; !check(); waited += 10) {
        if (waited > 10_000) throw new Error(`no request in 10 s; fetched ${JSON.stringify(fetched)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    try {
      const acts = createContactActivities({ client, writes, logger: silentLogger });
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 20, loadId: 'L1' });
      const range = { scanKey: scan.scanKey, perPage: 20, expectedTotal: 60, loadId: 'L1' };

      // Attempt 1: its pages were not done when the workflow planned them, so it asks nobody.
      let hold = holdOwner(writes);
      const first = new MockActivityEnvironment({ attempt: 1 }).run(acts.syncContactPages, { ...range, fromPage: 1, toPage: 2 });
      await until(() => fetched.length === 2);
      expect(fetched).toEqual([1, 2]);
      await hold.release();
      expect(await first).toMatchObject({ pages: 2, rows: 40, pagesLoadedNow: 2, requests: 2 });

      // Attempt 2 of a range whose first pages are durable: the page log is read before any
      // request (the owner holds it back), and only the page not yet loaded is fetched.
      fetched.length = 0;
      hold = holdOwner(writes);
      const retry = new MockActivityEnvironment({ attempt: 2 }).run(acts.syncContactPages, { ...range, fromPage: 1, toPage: 3 });
      await new Promise((r) => setTimeout(r, 200));
      expect(fetched).toEqual([]);
      await hold.release();
      expect(await retry).toMatchObject({ pages: 3, rows: 60, pagesLoadedNow: 1, requests: 1 });
      expect(fetched).toEqual([3]);
      const all = await writes.run((w) => w.query('SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts'));
      expect(all).toEqual([{ n: 60, d: 60 }]);
    } finally {
      await writes.close();
      await real.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
