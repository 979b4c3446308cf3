import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUCKETED_LAKE_TABLES } from '../../src/warehouse/lake-layout.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { makeContact } from './contact-factory.js';

const ctx = { loadId: 'L', syncedAt: new Date('2026-01-01T00:00:00Z') };
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => makeContact(from + i));

let dir = '';
let owner: WarehouseOwner | undefined;
afterEach(async () => {
  await owner?.close();
  owner = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function open(): Promise<{ owner: WarehouseOwner; lake: string }> {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-beside-'));
  const lake = join(dir, 'lake');
  owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: lake });
  return { owner, lake };
}

/** Rows per bucket of each contact table: in the lake, and in the warehouse. */
async function lakeAndWarehouse(o: WarehouseOwner, lake: string): Promise<{ lake: unknown[]; warehouse: unknown[] }> {
  const per = (from: (t: string) => string) =>
    o.run(async (w) => {
      const out: unknown[] = [];
      for (const t of BUCKETED_LAKE_TABLES) {
        const col = t.startsWith('contact_') ? 'contact_id' : 'id';
        const rows = await w.query(`SELECT ${col} // 50000 AS b, count(*) AS n, sum(hash(${col}, _load_id)) AS h FROM ${from(t)} GROUP BY b ORDER BY b`);
        out.push([t, rows.map((r) => [Number(r.b), Number(r.n), String(r.h)])]);
      }
      return out;
    });
  return { lake: await per((t) => `read_parquet('${lake}/${t}/**/*.parquet', hive_partitioning = true)`), warehouse: await per((t) => t) };
}

const dirty = (o: WarehouseOwner) => o.run(async (w) => (await w.query(`SELECT DISTINCT part FROM _lake_dirty ORDER BY part`)).map((r) => String(r.part)));
const settle = async (o: WarehouseOwner) => {
  for (let i = 0; i < 200 && o.pending > 0; i++) await new Promise((r) => setTimeout(r, 25));
};

describe('publishing lake buckets beside the write queue (real DuckDB)', () => {
  it('publishes the buckets asked for from a snapshot, and a load meanwhile leaves its bucket dirty for the next publish', async () => {
    const { owner: o, lake } = await open();
    await o.run((w) => w.publishLake()); // an earlier run's lake (empty)
    await o.run((w) => w.loadContacts([...ids(1, 30), ...ids(50_001, 30), ...ids(100_001, 30)], ctx));
    // A load queued right after the publish: it runs while (or before) the files are written.
    const published = o.publishBeside(BUCKETED_LAKE_TABLES, [0, 1]);
    const loaded = o.run((w) => w.loadContacts(ids(31, 5), { ...ctx, loadId: 'M' }));
    await Promise.all([published, loaded]);
    // Bucket 2 was not asked for; bucket 0 got rows after its marks were taken.
    expect(await dirty(o)).toEqual(['0', '2']);
    const inLake = await o.run((w) => w.query(`SELECT id // 50000 AS b, count(*) AS n FROM read_parquet('${lake}/contacts/**/*.parquet', hive_partitioning = true) GROUP BY b ORDER BY b`));
    expect(inLake.map((r) => Number(r.b))).toEqual([0, 1]);
    expect(Number(inLake[1]!.n)).toBe(30);
    // The run's final publish brings the lake level with the warehouse.
    await o.run((w) => w.publishLake());
    const both = await lakeAndWarehouse(o, lake);
    expect(both.lake).toEqual(both.warehouse);
    expect(await dirty(o)).toEqual([]);
  });

  it('puts the marks back when the publish fails, so the next publish writes those buckets', async () => {
    const { owner: o, lake } = await open();
    await o.run((w) => w.publishLake());
    await o.run((w) => w.loadContacts([...ids(1, 10), ...ids(50_001, 10)], ctx));
    // The next generation of contacts cannot be made: its parent is a file.
    const generations = join(lake, '_generations', 'contacts');
    await rm(generations, { recursive: true, force: true });
    await writeFile(generations, 'not a directory');
    await expect(o.publishBeside(BUCKETED_LAKE_TABLES, [0, 1])).rejects.toThrow();
    await settle(o);
    expect(await dirty(o)).toEqual(['0', '1']);
    await rm(generations, { force: true });
    await mkdir(generations);
    await o.run((w) => w.publishLake());
    const both = await lakeAndWarehouse(o, lake);
    expect(both.lake).toEqual(both.warehouse);
  });
});
