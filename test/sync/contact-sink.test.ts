import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCrmClient } from '../../src/crm/index.js';
import type { Contact } from '../../src/crm/types.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createContactSink, type ContactSink, type ContactSinkOptions } from '../../src/sync/contact-sink.js';
import { CONTACT_BUCKET_SIZE } from '../../src/warehouse/contact-columns.js';
import { scannedPages } from '../../src/warehouse/scan-tables.js';
import type { WriteJobs } from '../../src/sync/warehouse-port.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { makeContact } from '../warehouse/contact-factory.js';

/**
 * `inner` with every loadContacts, publishLake and publishBucketsAside call the sink makes noted
 * in `calls`, in order: `load <first id>`, `publish <options>` and `publish aside <buckets>` (a
 * publish beside the loads); other writes (the test's own) pass through.
 */
function recordingQueue(inner: WarehouseOwner, calls: string[]): WriteJobs & { readonly pending: number } {
  return {
    run: (job) =>
      inner.run((w) =>
        job(
          new Proxy(w, {
            get(target, prop) {
              const value = Reflect.get(target, prop) as unknown;
              if (typeof value !== 'function') return value;
              const fn = (value as (...a: unknown[]) => unknown).bind(target);
              if (prop !== 'loadContacts' && prop !== 'publishLake' && prop !== 'publishBucketsAside') return fn;
              return (...args: unknown[]) => {
                const publish = prop === 'publishLake' ? `publish ${JSON.stringify(args[1])}` : `publish aside ${JSON.stringify(args[1])}`;
                calls.push(prop === 'loadContacts' ? `load ${(args[0] as Contact[])[0]!.id}` : publish);
                return fn(...args);
              };
            },
          }),
        ),
      ),
    get pending() {
      return inner.pending;
    },
  };
}

/**
 * A sink whose pages linger (nothing loads) until flushed or a fetcher waits, so held rows are
 * what a test adds; a budget of 100 rows and the test's clock.
 */
function lingeringSink(writes: WriteJobs, now: () => number, options: ContactSinkOptions): ContactSink {
  return createContactSink(writes, { maxRowsPerLoad: 1_000, minRowsPerLoad: 1_000, lingerMs: 600_000, maxHeldRows: 100, publishColdBucketsAfterMs: false, now, ...options });
}

/**
 * A sink (loads of one 50-row page, cold after 1 s, a publish every two loads while the writer is
 * behind) over a new file's owner, its calls recorded: bucket 0 loaded and cold, the lake
 * published once. `page(n, from)` adds 50 contacts from `from`; `settled()` waits for the owner.
 */
async function sinkPastColdBucket(dir: string, options: ContactSinkOptions) {
  const inner = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
  const calls: string[] = [];
  let clock = 0;
  const sink = createContactSink(recordingQueue(inner, calls), { maxRowsPerLoad: 50, publishColdBucketsAfterMs: 1_000, publishEveryLoads: 2, now: () => clock, ...options });
  const page = (n: number, from: number) =>
    sink.add({ scanKey: 'k', page: n, items: Array.from({ length: 50 }, (_, i) => makeContact(from + i)), reportedTotal: 400, loadId: 'L', syncedAt: new Date() });
  await inner.run((w) => w.publishLake());
  await page(1, 1); // bucket 0
  clock = 5_000; // bucket 0 is cold from now on
  return { sink, calls, page, settled: () => quiet(inner) };
}

/** Ids per lake bucket: contact `b * S + 1` is in bucket b. */
const S = CONTACT_BUCKET_SIZE;

const owners: WarehouseOwner[] = [];
/** The file's owner, as a worker holds it; closed after each test. */
async function ownerOf(dbPath: string, lakePath: string): Promise<WarehouseOwner> {
  const owner = await openWarehouseOwner({ dbPath, lakePath });
  owners.push(owner);
  return owner;
}
/**
 * Waits until the owner's queue is empty and no lake publish of the sink runs beside it (a
 * publish aside of nothing waits for the one running).
 */
async function quiet(owner: WarehouseOwner): Promise<void> {
  for (let i = 0; i < 200 && owner.pending > 0; i++) await new Promise((r) => setTimeout(r, 25));
  await owner.run((w) => w.publishBucketsAside([], []));
}
afterEach(async () => {
  for (const o of owners.splice(0)) await o.close();
});

describe('warehouse owner and contact sink (real DuckDB, simulator contacts)', () => {
  it('merges concurrent pages into few loads, records every page, credits stats once, and isolates a failing job', async () => {
    const sim = await startSimulator({ contacts: 400, seed: 17 });
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const pages: Contact[][] = [];
      for (let page = 1; page <= 8; page++) pages.push((await client.contacts.listPage({ page, perPage: 50, order: 'asc', orderBy: 'id' })).items);
      const loads: string[] = [];
      const owner = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      const writes = recordingQueue(owner, loads);
      const sink = createContactSink(writes);
      const syncedAt = new Date();
      // Page 2 again as page 9: a row seen twice (drift) must load once.
      const all = [...pages, pages[1]!].map((items, i) => sink.add({ scanKey: 'k', page: i + 1, items, reportedTotal: 400, loadId: 'L', syncedAt }));
      const stats = await Promise.all(all);
      expect(stats.reduce((n, s) => n + s.inserted, 0)).toBe(400);
      expect(loads.filter((c) => c.startsWith('load')).length).toBeLessThan(9);
      expect(await writes.run((w) => scannedPages(w, 'k'))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const n = await writes.run((w) => w.query(`SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts`));
      expect(Number(n[0]?.n)).toBe(400);
      expect(Number(n[0]?.d)).toBe(400);

      // A failing job rejects alone; the queue keeps serving the next ones.
      const bad = writes.run(async (w) => {
        await w.query('SELECT * FROM no_such_table');
      });
      const good = writes.run((w) => w.query('SELECT 1 AS one'));
      await expect(bad).rejects.toThrow();
      expect(await good).toEqual([{ one: 1 }]);
      expect(writes.pending).toBe(0);
    } finally {
      await client.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('holds fetchers at room() while its row budget is full, and lets them go as loads finish', async () => {
    const sim = await startSimulator({ contacts: 200, seed: 23 });
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const writes = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      const sink = createContactSink(writes, { maxHeldRows: 100 });
      await sink.room(); // empty: at once
      const p1 = (await client.contacts.listPage({ page: 1, perPage: 50, order: 'asc', orderBy: 'id' })).items;
      const p2 = (await client.contacts.listPage({ page: 2, perPage: 50, order: 'asc', orderBy: 'id' })).items;
      const syncedAt = new Date();
      const adds = [p1, p2].map((items, i) => sink.add({ scanKey: 'k', page: i + 1, items, reportedTotal: 200, loadId: 'L', syncedAt }));
      expect(sink.heldRows).toBe(100);
      let letGo = false;
      const waiting = sink.room().then(() => {
        letGo = true;
        return sink.heldRows;
      });
      await new Promise((r) => setImmediate(r));
      expect(letGo).toBe(false);
      await Promise.all(adds);
      expect(await waiting).toBeLessThan(100);
      expect(sink.heldRows).toBe(0);
      const n = await writes.run((w) => w.query('SELECT count(*) AS n FROM contacts'));
      expect(Number(n[0]?.n)).toBe(100);
    } finally {
      await client.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('publishes the lake buckets no load has touched for a while, during the scan, and leaves the rest to the final publish', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const lake = join(dir, 'lake');
      const writes = await ownerOf(join(dir, 'crm.duckdb'), lake);
      let clock = 0;
      const errors: unknown[] = [];
      const sink = createContactSink(writes, { publishColdBucketsAfterMs: 1_000, now: () => clock, onPublishError: (e) => errors.push(e) });
      const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => makeContact(from + i));
      const page = (page: number, items: Contact[]) => sink.add({ scanKey: 'k', page, items, reportedTotal: 100, loadId: 'L', syncedAt: new Date() });
      await writes.run((w) => w.publishLake()); // an earlier run's lake (empty)
      await page(1, range(1, 50)); // bucket 0
      clock = 5_000;
      // Bucket 1, a range further on (pages 2-4 not loaded, so bucket 0 is not known whole): bucket 0 is now cold.
      await page(5, range(S + 1, 50));
      await quiet(writes);
      const inLake = async () =>
        (await writes.run((w) => w.query(`SELECT id_bucket AS b, count(*) AS n FROM read_parquet('${lake}/contacts/**/*.parquet', hive_partitioning = true) GROUP BY b ORDER BY b`))).map((r) => [
          Number(r.b),
          Number(r.n),
        ]);
      expect(await inLake()).toEqual([[0, 50]]);
      const dirty = await writes.run((w) => w.query(`SELECT table_name AS t, part FROM _lake_dirty ORDER BY t`));
      expect(dirty).toEqual(['contact_lists', 'contact_tags', 'contacts', 'contacts_history'].map((t) => ({ t, part: '1' })));
      // The run's final publish writes what was still hot.
      await writes.run((w) => w.publishLake());
      expect(await inLake()).toEqual([
        [0, 50],
        [1, 50],
      ]);
      expect(errors).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('leaves a cold bucket above one still being loaded unpublished: that range goes on into it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    const inner = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
    try {
      const calls: string[] = [];
      const writes = recordingQueue(inner, calls);
      let clock = 0;
      const sink = createContactSink(writes, { publishColdBucketsAfterMs: 1_000, now: () => clock });
      const range = (from: number) => Array.from({ length: 20 }, (_, i) => makeContact(from + i));
      const page = (page: number, from: number) => sink.add({ scanKey: 'k', page, items: range(from), reportedTotal: 60, loadId: 'L', syncedAt: new Date() });
      await inner.run((w) => w.publishLake());
      // Two ranges side by side: one starts in bucket 0, the one after it in bucket 2 (pages
      // apart, so no bucket is known whole).
      await page(1, 1);
      await page(9, 2 * S + 1);
      clock = 5_000;
      // The first range has moved on to bucket 1; the second has not loaded for a while.
      await page(5, S + 1);
      await quiet(inner);
      // Bucket 2 is cold by the clock, but the range in bucket 1 may still reach it. (The page of
      // bucket 1 lingers for company while the writer is idle, so cold bucket 0 goes out first.)
      expect(calls).toEqual(['load 1', `load ${2 * S + 1}`, 'publish aside [0]', `load ${S + 1}`]);
      sink.publishTouched();
      await quiet(inner);
      expect(calls.slice(4)).toEqual(['publish {"buckets":[1,2],"lanes":2}']);
    } finally {
      await quiet(inner);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('publishes a bucket once the pages around it are loaded, before it turns cold', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    const lake = join(dir, 'lake');
    const inner = await ownerOf(join(dir, 'crm.duckdb'), lake);
    try {
      const calls: string[] = [];
      // Nothing ever gets cold on this clock.
      const sink = createContactSink(recordingQueue(inner, calls), { publishColdBucketsAfterMs: 1_000, lingerMs: 0, now: () => 0 });
      await inner.run((w) => w.publishLake());
      const settled = async (): Promise<void> => {
        await quiet(inner);
      };
      const page = async (n: number, from: number) => {
        await sink.add({ scanKey: 'k', page: n, items: Array.from({ length: 50 }, (_, i) => makeContact(from + i)), reportedTotal: 200, loadId: 'L', syncedAt: new Date() });
        await settled();
      };
      // Page 2 holds the end of bucket 0 and the start of bucket 1, page 4 is in bucket 2.
      await page(1, 1);
      await page(3, S + 30);
      expect(calls.filter((c) => c.startsWith('publish'))).toEqual([]); // page 2 could hold ids of either
      await page(2, S - 20);
      expect(calls.filter((c) => c.startsWith('publish'))).toEqual(['publish aside [0]']);
      await page(4, 2 * S + 1);
      // Bucket 1 is whole now; bucket 2 waits for page 5, or for the scan's end.
      expect(calls.filter((c) => c.startsWith('publish'))).toEqual(['publish aside [0]', 'publish aside [1]']);
      const inLake = await inner.run((w) => w.query(`SELECT id_bucket AS b, count(*) AS n FROM read_parquet('${lake}/contacts/**/*.parquet', hive_partitioning = true) GROUP BY b ORDER BY b`));
      expect(inLake.map((r) => [Number(r.b), Number(r.n)])).toEqual([
        [0, 70],
        [1, 80],
      ]);
      expect(await inner.run((w) => w.query(`SELECT DISTINCT part FROM _lake_dirty`))).toEqual([{ part: '2' }]);
      // Page 5 ends the listing (its total says so): no page 6 can hold ids of bucket 2.
      await sink.add({ scanKey: 'k', page: 5, items: [makeContact(2 * S + 60)], reportedTotal: 201, endsListing: true, loadId: 'L', syncedAt: new Date() });
      await settled();
      // With every page through the listing's last loaded, nothing else wants the cores: two lanes.
      expect(calls.filter((c) => c.startsWith('publish')).at(-1)).toBe('publish {"buckets":[2],"lanes":2}');
      expect(await inner.run((w) => w.query(`SELECT DISTINCT part FROM _lake_dirty`))).toEqual([]);
      // A new scan starts over: its first pages say nothing of buckets the last one saw whole.
      await sink.add({ scanKey: 'k2', page: 2, items: [makeContact(S + 5, { city: 'Again' })], reportedTotal: 200, loadId: 'L2', syncedAt: new Date() });
      await settled();
      expect(calls.filter((c) => c.startsWith('publish'))).toHaveLength(3);
    } finally {
      await quiet(inner);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('publishes every bucket it touched, hot ones too, at the end of a scan (publishTouched), a few per job', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    const lake = join(dir, 'lake');
    const inner = await ownerOf(join(dir, 'crm.duckdb'), lake);
    try {
      const published: string[] = [];
      const writes = recordingQueue(inner, published);
      const errors: unknown[] = [];
      // Nothing ever gets cold on this clock: only publishTouched publishes.
      const sink = createContactSink(writes, { publishColdBucketsAfterMs: 1_000, now: () => 0, onPublishError: (e) => errors.push(e) });
      await inner.run((w) => w.publishLake());
      const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => makeContact(from + i));
      // Pages apart: no bucket is known whole either.
      const loads = [0, 1, 2].map((b) => sink.add({ scanKey: 'k', page: 1 + 4 * b, items: range(b * S + 1, 20), reportedTotal: 60, loadId: 'L', syncedAt: new Date() }));
      await Promise.all(loads);
      sink.publishTouched();
      // A write queued meanwhile runs between the publish jobs, not after all of them.
      await inner.run(async (w) => {
        published.push('another write');
        await w.query('SELECT 1');
      });
      await quiet(inner);
      expect(published).toEqual(['load 1', 'publish {"buckets":[0,1],"lanes":2}', 'another write', 'publish {"buckets":[2],"lanes":2}']);
      const inLake = await inner.run((w) => w.query(`SELECT id_bucket AS b, count(*) AS n FROM read_parquet('${lake}/contacts/**/*.parquet', hive_partitioning = true) GROUP BY b ORDER BY b`));
      expect(inLake.map((r) => [Number(r.b), Number(r.n)])).toEqual([
        [0, 20],
        [1, 20],
        [2, 20],
      ]);
      expect(await inner.run((w) => w.query('SELECT count(*) AS n FROM _lake_dirty'))).toEqual([{ n: 0 }]);
      // Nothing touched since: a second call publishes nothing.
      sink.publishTouched();
      expect(published).toHaveLength(4);
      expect(errors).toEqual([]);
    } finally {
      await quiet(inner);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('publishes cold buckets between loads (every publishEveryLoads) while fetchers wait for room, not while the CRM is the bottleneck', async () => {
    for (const [maxHeldRows, expected] of [
      // Three pages of bucket 1 at once, one load each. After the second load the third still
      // waits: a fetcher has waited for room, so two loads since the last publish send cold
      // bucket 0 out first.
      [100, ['load 1', `load ${S + 1}`, `load ${S + 51}`, 'publish aside [0]', `load ${S + 101}`]],
      // With room to spare no fetcher waits on the warehouse: publish once pages stop.
      [1_000, ['load 1', `load ${S + 1}`, `load ${S + 51}`, `load ${S + 101}`, 'publish aside [0]']],
    ] as const) {
      const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
      try {
        const { sink, calls, page, settled } = await sinkPastColdBucket(dir, { maxHeldRows });
        // A range further on (bucket 0 is not known whole: page 2 is not loaded).
        const pages = [page(6, S + 1), page(7, S + 51), page(8, S + 101)];
        // A fetcher asks for room: with 150 rows held it waits when the budget is 100.
        const room = sink.room();
        await Promise.all([...pages, room]);
        await settled();
        expect(calls).toEqual(expected);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('counts a run of loads that each leave pages waiting as the writer setting the pace, though no fetcher waited at room()', async () => {
    // Ranges wait on their own loads before the sink's budget fills: in a CPU-bound scan no
    // fetcher waits at room(), and the writer being behind shows only in the loads.
    for (const [pages, paced] of [
      [4, true], // three loads leave pages behind, the fourth none: the CRM still sets the pace
      [6, false], // the fourth load in a row to leave pages behind: the writer sets the pace
    ] as const) {
      const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
      try {
        const writes = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
        let clock = 0;
        const sink = createContactSink(writes, { maxRowsPerLoad: 50, lingerMs: 0, keepUpMs: 3_000, publishColdBucketsAfterMs: false, now: () => clock });
        await sink.room();
        clock = 1_500;
        await sink.room();
        expect(sink.crmSetsPace).toBe(true);
        const range = (from: number) => Array.from({ length: 50 }, (_, i) => makeContact(from + i));
        // Added at once: each load takes one page (50 rows, a full load) and leaves the rest waiting.
        await Promise.all(Array.from({ length: pages }, (_, i) => sink.add({ scanKey: 'k', page: i + 1, items: range(1 + 50 * i), reportedTotal: 300, loadId: 'L', syncedAt: new Date() })));
        expect(sink.crmSetsPace).toBe(paced);
        // keepUpMs later, asking all along and no such run since: the CRM sets the pace again.
        clock = 4_500;
        await sink.room();
        expect(sink.crmSetsPace).toBe(true);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('publishes cold buckets every publishEveryLoads while loads run behind, with no fetcher waiting at room()', async () => {
    for (const [pages, midRun] of [
      [3, false], // too short a run to count: the publish waits until the pages stop
      [6, true],
    ] as const) {
      const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
      try {
        const { calls, page, settled } = await sinkPastColdBucket(dir, { lingerMs: 0 });
        await Promise.all(Array.from({ length: pages }, (_, i) => page(10 + i, S + 1 + 50 * i)));
        await settled();
        const published = calls.indexOf('publish aside [0]');
        const lastLoad = calls.indexOf(`load ${S + 1 + 50 * (pages - 1)}`);
        expect(published).toBeGreaterThan(0);
        expect(calls.filter((c) => c.startsWith('load'))).toHaveLength(pages + 1);
        expect(published < lastLoad).toBe(midRun);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('lets a lone page wait for others while the writer is idle, loads once enough rows wait, and loads at once on flush', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const inner = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      const calls: string[] = [];
      const writes = recordingQueue(inner, calls);
      // A linger far beyond the test: only rows or a flush can start a load.
      const sink = createContactSink(writes, { maxRowsPerLoad: 200, minRowsPerLoad: 100, lingerMs: 600_000, publishColdBucketsAfterMs: false });
      const page = (n: number, from: number) =>
        sink.add({ scanKey: 'k', page: n, items: Array.from({ length: 50 }, (_, i) => makeContact(from + i)), reportedTotal: 150, loadId: 'L', syncedAt: new Date() });
      const first = page(1, 1);
      await new Promise((r) => setTimeout(r, 50));
      expect(calls).toEqual([]);
      expect(sink.heldRows).toBe(50);
      // The second page brings the rows waiting to the minimum: one load for both.
      const stats = await Promise.all([first, page(2, 51)]);
      expect(calls).toEqual(['load 1']);
      expect(stats[0]!.inserted).toBe(100);
      // A lone page again: the range's end flushes it.
      const third = page(3, 101);
      await new Promise((r) => setTimeout(r, 50));
      expect(calls).toEqual(['load 1']);
      sink.flush();
      await third;
      expect(calls).toEqual(['load 1', 'load 101']);
      expect(await writes.run((w) => scannedPages(w, 'k'))).toEqual([1, 2, 3]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('loads a lone page once its linger is over, with no flush', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const inner = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      const calls: string[] = [];
      const sink = createContactSink(recordingQueue(inner, calls), { minRowsPerLoad: 1_000, lingerMs: 100, publishColdBucketsAfterMs: false });
      const added = sink.add({ scanKey: 'k', page: 1, items: [makeContact(1)], reportedTotal: 1, loadId: 'L', syncedAt: new Date() });
      await new Promise((r) => setTimeout(r, 20));
      expect(calls).toEqual([]);
      expect((await added).inserted).toBe(1);
      expect(calls).toEqual(['load 1']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives fetchers the larger keep-up budget after a second of asking with no wait, the plain one for keepUpMs after a wait', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const writes = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      let clock = 0;
      const sink = lingeringSink(writes, () => clock, { keepUpHeldRows: 200, keepUpMs: 1_000 });
      let next = 1;
      const add = (rows: number) => {
        const from = next;
        next += rows;
        return sink.add({ scanKey: 'k', page: from, items: Array.from({ length: rows }, (_, i) => makeContact(from + i)), reportedTotal: 1_000, loadId: 'L', syncedAt: new Date() });
      };
      /** Whether room() lets a fetcher go at once. */
      const roomNow = async (): Promise<boolean> => {
        let now = false;
        const room = sink.room().then(() => {
          now = true;
        });
        await Promise.resolve();
        const atOnce = now;
        await room;
        return atOnce;
      };
      // The first second of asking: the plain budget of 100, so a CPU-bound scan's first pages
      // do not fill the larger one before its first wait.
      const first = [add(50)];
      expect(await roomNow()).toBe(true); // 50 held
      first.push(add(50), add(50));
      clock = 600;
      expect(await roomNow()).toBe(false); // 150 held after 0.6 s of asking: waits, and the load starts
      await Promise.all(first);
      clock = 1_100;
      expect(await roomNow()).toBe(true); // nothing held
      clock = 1_700; // asking for 1.7 s, the wait 1.1 s ago: the keep-up budget of 200
      const adds = [add(50), add(50), add(50)];
      expect(await roomNow()).toBe(true); // 150 held: under the keep-up budget
      adds.push(add(50));
      expect(await roomNow()).toBe(false); // 200 held: waits, and the waiting fetcher starts the load
      await Promise.all(adds);
      expect(sink.heldRows).toBe(0);
      clock = 2_200; // a fetcher waited 500 ms ago: the plain budget of 100
      const more = [add(50), add(50)];
      expect(await roomNow()).toBe(false);
      await Promise.all(more);
      clock = 3_000;
      expect(await roomNow()).toBe(true); // nothing held, and still asking
      clock = 3_700; // no wait for 1.5 s: the keep-up budget again
      const last = [add(50), add(50), add(50)];
      expect(await roomNow()).toBe(true);
      sink.flush();
      await Promise.all(last);
      const n = await writes.run((w) => w.query('SELECT count(*) AS n FROM contacts'));
      expect(Number(n[0]?.n)).toBe(600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says the CRM sets the pace once fetchers have asked for room for a second, none waiting for keepUpMs; not after a pause', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const writes = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      let clock = 0;
      const sink = lingeringSink(writes, () => clock, { keepUpMs: 3_000 });
      const askAt = async (t: number): Promise<boolean> => {
        clock = t;
        await sink.room();
        return sink.crmSetsPace;
      };
      // A range that starts before any fetcher asked (a scan's first) cannot know yet.
      expect(sink.crmSetsPace).toBe(false);
      expect([await askAt(0), await askAt(500), await askAt(1_000), await askAt(1_500)]).toEqual([false, false, true, true]);
      // A fetcher waits for room: the writer sets the pace, for keepUpMs after the wait.
      const full = sink.add({ scanKey: 'k', page: 1, items: Array.from({ length: 100 }, (_, i) => makeContact(i + 1)), reportedTotal: 100, loadId: 'L', syncedAt: new Date() });
      clock = 1_600;
      const waited = sink.room();
      expect(sink.crmSetsPace).toBe(false);
      await Promise.all([full, waited]);
      expect([await askAt(2_000), await askAt(3_000), await askAt(4_000), await askAt(4_600)]).toEqual([false, false, false, true]);
      // Nobody asked for longer than keepUpMs (between scans): a new run of asking needs a second again.
      clock = 8_000;
      expect(sink.crmSetsPace).toBe(false);
      expect([await askAt(8_000), await askAt(8_900), await askAt(9_000)]).toEqual([false, false, true]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('loads a page and records it in the page log in one transaction: when the log cannot be written, the rows are not there either', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const writes = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      const sink = createContactSink(writes, { publishColdBucketsAfterMs: false });
      const page = (n: number, from: number) =>
        sink.add({ scanKey: 'k', page: n, items: Array.from({ length: 20 }, (_, i) => makeContact(from + i)), reportedTotal: 40, loadId: 'L', syncedAt: new Date() });
      await page(1, 1);
      // The page log's id table gone: the next page's log fails after its rows were loaded.
      await writes.run((w) => w.query('ALTER TABLE _sweep_seen RENAME TO _sweep_seen_away'));
      await expect(page(2, 21)).rejects.toThrow();
      await writes.run((w) => w.query('ALTER TABLE _sweep_seen_away RENAME TO _sweep_seen'));
      // A crash-resumed scan refetches exactly the pages not logged; their rows must not be half there.
      expect(await writes.run((w) => scannedPages(w, 'k'))).toEqual([1]);
      const n = await writes.run((w) => w.query('SELECT count(*) AS n, max(id) AS top FROM contacts'));
      expect(Number(n[0]?.n)).toBe(20);
      expect(Number(n[0]?.top)).toBe(20);
      // And the page loads once it can be logged.
      await page(2, 21);
      expect(await writes.run((w) => scannedPages(w, 'k'))).toEqual([1, 2]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps an unreadable raw page its own error when the page log joins the load', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-sink-'));
    try {
      const writes = await ownerOf(join(dir, 'crm.duckdb'), join(dir, 'lake'));
      const sink = createContactSink(writes, { publishColdBucketsAfterMs: false });
      const added = sink.add({ scanKey: 'k', page: 1, items: [], raw: { bodies: ['{"subscribers": {"data": [{"id": 1'], rows: 1, ids: [1] }, reportedTotal: 1, loadId: 'L', syncedAt: new Date() });
      await expect(added).rejects.toMatchObject({ code: 'WAREHOUSE_PAGE_UNREADABLE' });
      expect(await writes.run((w) => scannedPages(w, 'k'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
