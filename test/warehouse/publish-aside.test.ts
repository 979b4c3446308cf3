import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { CONTACT_BUCKET_SIZE } from '../../src/warehouse/contact-columns.js';
import { BUCKETED_LAKE_TABLES, GENERATIONS_DIR } from '../../src/warehouse/lake-layout.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths } from './temp-warehouse.js';

// A publish of lake buckets beside the writer (publish-aside.ts): on a connection of its own,
// from the rows committed when it started, while the owner's next jobs run.
const S = CONTACT_BUCKET_SIZE;
const opened: { owner: WarehouseOwner; cleanup: () => void }[] = [];

afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.owner.close();
    o.cleanup();
  }
});

/** An owner over a new file whose lake holds buckets 0 and 1 (contacts 1-50 and S+1-S+50), published. */
async function ownerWithLake(): Promise<{ owner: WarehouseOwner; lake: string; p: ReturnType<typeof tempPaths> }> {
  const p = tempPaths();
  const owner = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
  opened.push({ owner, cleanup: p.cleanup });
  const range = (from: number) => Array.from({ length: 50 }, (_, i) => makeContact(from + i));
  await owner.run((w) => w.loadContacts([...range(1), ...range(S + 1)], ctx()));
  await owner.run((w) => w.publishLake());
  return { owner, lake: p.lakePath, p };
}

const cityInLake = (owner: WarehouseOwner, lake: string, id: number) =>
  owner.run(async (w) => (await w.query(`SELECT city FROM read_parquet('${lake}/contacts/**/*.parquet', hive_partitioning = true) WHERE id = ${id}`))[0]?.city);
const partsOf = (owner: WarehouseOwner, table: '_lake_dirty' | '_lake_publishing') =>
  owner.run(async (w) => (await w.query(`SELECT DISTINCT part FROM ${table} WHERE table_name = 'contacts' ORDER BY part`)).map((r) => String(r.part)));

describe('publishing lake buckets beside the writer', () => {
  it('writes the buckets as they were when it started while a later load commits, and that load leaves its bucket dirty', async () => {
    const { owner, lake } = await ownerWithLake();
    await owner.run((w) => w.loadContacts([makeContact(5, { city: 'Changed' }), makeContact(S + 5, { city: 'Changed' })], ctx()));
    expect(await partsOf(owner, '_lake_dirty')).toEqual(['0', '1']);

    const { done } = await owner.run((w) => w.publishBucketsAside(BUCKETED_LAKE_TABLES, [0]));
    // The next job runs while the publish may still be writing: it commits a newer version.
    await owner.run((w) => w.loadContacts([makeContact(5, { city: 'Later' })], ctx()));
    await done;

    expect(await cityInLake(owner, lake, 5)).toBe('Changed');
    // Bucket 1 was not asked for; bucket 0 is dirty again for the later version.
    expect(await cityInLake(owner, lake, S + 5)).not.toBe('Changed');
    expect(await partsOf(owner, '_lake_dirty')).toEqual(['0', '1']);

    // The next publish records the one aside as done and writes the rest.
    await owner.run((w) => w.publishLake());
    expect(await cityInLake(owner, lake, 5)).toBe('Later');
    expect(await cityInLake(owner, lake, S + 5)).toBe('Changed');
    expect(await partsOf(owner, '_lake_dirty')).toEqual([]);
    expect(await partsOf(owner, '_lake_publishing')).toEqual([]);
  });

  it('puts the buckets of a publish that failed back among the dirty ones, for the next publish', async () => {
    const { owner, lake } = await ownerWithLake();
    await owner.run((w) => w.loadContacts([makeContact(7, { city: 'Changed' })], ctx()));
    // Where the next generation of `contacts` would go, a file: its directory cannot be made.
    const generations = join(lake, GENERATIONS_DIR, 'contacts');
    await rm(generations, { recursive: true, force: true });
    await writeFile(generations, 'not a directory');

    const { done } = await owner.run((w) => w.publishBucketsAside(BUCKETED_LAKE_TABLES, [0]));
    await expect(done).rejects.toThrow();
    expect(await partsOf(owner, '_lake_publishing')).toEqual(['0']);

    await rm(generations, { force: true });
    await mkdir(generations, { recursive: true });
    await owner.run((w) => w.publishLake());
    expect(await cityInLake(owner, lake, 7)).toBe('Changed');
    expect(await partsOf(owner, '_lake_dirty')).toEqual([]);
    expect(await partsOf(owner, '_lake_publishing')).toEqual([]);
  });

  it('makes another publish of the lake wait until the one aside has ended', async () => {
    const { owner } = await ownerWithLake();
    await owner.run((w) => w.loadContacts([makeContact(9, { city: 'Changed' }), makeContact(S + 9, { city: 'Changed' })], ctx()));
    let asideEnded = false;
    const { done } = await owner.run((w) => w.publishBucketsAside(BUCKETED_LAKE_TABLES, [0]));
    done.then(
      () => (asideEnded = true),
      () => undefined,
    );
    const endedBeforeTheNext = await owner.run(async (w) => {
      await w.publishLake();
      return asideEnded;
    });
    expect(endedBeforeTheNext).toBe(true);
  });

  it('tells the owner when the publish aside has ended (its checkpoints wait for it)', async () => {
    const { owner, lake } = await ownerWithLake();
    await owner.run((w) => w.loadContacts([makeContact(11, { city: 'Changed' })], ctx()));
    let asideEnded = false;
    const { done } = await owner.run((w) => w.publishBucketsAside(BUCKETED_LAKE_TABLES, [0]));
    done.then(
      () => (asideEnded = true),
      () => undefined,
    );
    await owner.run((w) => w.publishAsideEnded());
    expect(asideEnded).toBe(true);
    expect(await cityInLake(owner, lake, 11)).toBe('Changed');
  });

  it('puts buckets a stopped process left in the middle of a publish back among the dirty ones when the file is opened again', async () => {
    const p = tempPaths();
    const first = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    await first.run((w) => w.query(`INSERT INTO _lake_publishing VALUES ('contacts', '3'), ('contact_tags', '3')`));
    await first.close();
    const again = await openWarehouseOwner({ dbPath: p.dbPath, lakePath: p.lakePath });
    opened.push({ owner: again, cleanup: p.cleanup });
    expect(await again.run((w) => w.query(`SELECT table_name, part FROM _lake_dirty ORDER BY ALL`))).toEqual([
      { table_name: 'contact_tags', part: '3' },
      { table_name: 'contacts', part: '3' },
    ]);
    expect(await partsOf(again, '_lake_publishing')).toEqual([]);
  });
});
