import { mkdirSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJsonLogger } from '../../src/logger.js';
import { LAKE_TABLES, withCatalog, type WarehouseHandle } from '../../src/warehouse/index.js';
import { isLakeRace } from '../../src/warehouse/with-catalog.js';
import { CONTACT_BUCKET_SIZE } from '../../src/warehouse/contact-columns.js';
import { MAX_APPEND_FILES, lakeSelectSql } from '../../src/warehouse/lake-layout.js';
import { readLakeManifest, writeLakeManifest } from '../../src/warehouse/lake-manifest.js';
import { publishLake } from '../../src/warehouse/publish-lake.js';
import { makeContact } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
});
afterAll(() => closeTempWarehouse({ p, w }));

// Three id ranges (lake partitions) of contacts: buckets 0, 1 and 2.
const S = CONTACT_BUCKET_SIZE;
const ids = [...Array.from({ length: 200 }, (_, i) => i + 1), ...Array.from({ length: 50 }, (_, i) => S + 1 + i), ...Array.from({ length: 50 }, (_, i) => 2 * S + S / 2 + 1 + i)];

function lakeSelect(table: string): string {
  const glob = `'${join(p.lakePath, table)}/**/*.parquet'`;
  return LAKE_TABLES[table]!.kind === 'bucket' ? `SELECT * EXCLUDE (id_bucket) FROM read_parquet(${glob}, hive_partitioning = true)` : `SELECT * FROM read_parquet(${glob})`;
}

/** Rows in DuckDB but not in the lake plus rows in the lake but not in DuckDB (multiset). */
async function differences(table: string): Promise<number> {
  // The warehouse's rows as the lake holds them (without the columns it leaves out, LAKE_OMITTED_COLUMNS).
  const [r] = await w.query(`SELECT count(*) AS n FROM ((${lakeSelectSql(table)} EXCEPT ALL ${lakeSelect(table)}) UNION ALL (${lakeSelect(table)} EXCEPT ALL ${lakeSelectSql(table)}))`);
  return Number(r!.n);
}

async function expectLakeEqualsDuckDb(): Promise<void> {
  for (const table of Object.keys(LAKE_TABLES)) {
    expect(await differences(table), table).toBe(0);
    const [a] = await w.query(`SELECT count(*) AS n FROM "${table}"`);
    const [b] = await w.query(`SELECT count(*) AS n FROM (${lakeSelect(table)})`);
    expect(b, table).toEqual(a);
  }
}

function filesOf(table: string): string[] {
  const root = realpathSync(join(p.lakePath, table));
  const out: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d, { withFileTypes: true })) {
      if (f.isDirectory()) walk(join(d, f.name));
      else out.push(join(d, f.name));
    }
  };
  walk(root);
  return out;
}

describe('publishLake', () => {
  it('mirrors every table exactly, with the contacts partitioned by id range', async () => {
    await w.loadContacts(
      ids.map((id) => makeContact(id)),
      ctx(),
    );
    await w.loadEntities('tags', [{ id: 1, title: 'A', slug: 'a', description: null, total_count: 1, subscribers_count: 1, created_at: null, updated_at: null, raw: {} }], ctx(), { complete: true });
    await w.publishLake();
    await expectLakeEqualsDuckDb();
    const parts = readdirSync(realpathSync(join(p.lakePath, 'contacts'))).sort();
    expect(parts).toEqual(['id_bucket=0', 'id_bucket=1', 'id_bucket=2']);
    // The manifest counts the files readers read, those in the id ranges' folders too.
    const manifest = await readLakeManifest(p.lakePath);
    expect(manifest?.tables.contacts?.files).toBe(filesOf('contacts').length);
    expect(manifest?.tables.contacts?.files).toBe(3);
    expect(manifest?.tables.tags?.files).toBe(1);
    // types survive the round trip
    const [t] = await w.query(`SELECT typeof(created_at) AS c, typeof(tag_ids) AS l, typeof(id) AS i FROM (${lakeSelect('contacts')}) LIMIT 1`);
    expect(t).toEqual({ c: 'TIMESTAMP WITH TIME ZONE', l: 'BIGINT[]', i: 'BIGINT' });
    // zstd-compressed column chunks (smaller than the default snappy, and as fast to write).
    const codecs = await w.query(`SELECT DISTINCT compression FROM parquet_metadata('${join(p.lakePath, 'contacts')}/**/*.parquet')`);
    expect(codecs).toEqual([{ compression: 'ZSTD' }]);
  });

  it('rewrites only the partitions a load touched and hard-links the rest', async () => {
    const before = new Map(filesOf('contacts').map((f) => [f.split('/').slice(-2).join('/'), statSync(f).ino]));
    await w.loadContacts([makeContact(S + 10, { city: 'Elsewhere' })], ctx());
    await w.tombstoneContacts([2 * S + S / 2 + 5], ctx());
    await w.publishLake();
    await expectLakeEqualsDuckDb();
    const after = filesOf('contacts');
    const bucketOf = (f: string) => f.split('/').slice(-2)[0];
    const inodes = new Map(after.map((f) => [bucketOf(f), statSync(f).ino]));
    const beforeByBucket = new Map([...before].map(([k, v]) => [k.split('/')[0], v]));
    expect(inodes.get('id_bucket=0')).toBe(beforeByBucket.get('id_bucket=0'));
    expect(inodes.get('id_bucket=1')).not.toBe(beforeByBucket.get('id_bucket=1'));
    expect(inodes.get('id_bucket=2')).not.toBe(beforeByBucket.get('id_bucket=2'));
    // nothing changed: nothing republished
    const gen = realpathSync(join(p.lakePath, 'contacts'));
    await w.loadContacts([makeContact(1)], ctx());
    await w.publishLake();
    expect(realpathSync(join(p.lakePath, 'contacts'))).toBe(gen);
  });

  it('publishes only the chosen buckets and leaves the other changes for the next publish', async () => {
    await w.loadContacts([makeContact(20, { city: 'Bucket zero' }), makeContact(2 * S + S / 2 + 10, { city: 'Bucket two' })], ctx());
    const inLake = async (id: number) => (await w.query(`SELECT city FROM (${lakeSelect('contacts')}) WHERE id = ${id}`))[0]?.city;
    await w.publishLake(['contacts'], { buckets: [0] });
    expect(await inLake(20)).toBe('Bucket zero');
    expect(await inLake(2 * S + S / 2 + 10)).not.toBe('Bucket two');
    expect(await differences('contacts')).toBe(2); // the old and the new row in bucket 2
    await w.publishLake();
    expect(await inLake(2 * S + S / 2 + 10)).toBe('Bucket two');
    await expectLakeEqualsDuckDb();
  });

  it('leaves a dirty bucket whose rows are all gone out of the next generation, and keeps the others', async () => {
    // Every contact of bucket 1 loses its tags (a merge deletes their contact_tags rows).
    const bucket1 = ids.filter((id) => id >= S && id < 2 * S);
    await w.loadContacts(
      bucket1.map((id) => makeContact(id, { tags: [] })),
      ctx(),
    );
    expect(await w.query(`SELECT count(*) AS n FROM contact_tags WHERE contact_id >= ${S} AND contact_id < ${2 * S}`)).toEqual([{ n: 0 }]);
    await w.publishLake(['contact_tags']);
    const parts = readdirSync(realpathSync(join(p.lakePath, 'contact_tags'))).sort();
    expect(parts).toEqual(['id_bucket=0', 'id_bucket=2']);
    expect(await differences('contact_tags')).toBe(0);
    await w.publishLake();
    await expectLakeEqualsDuckDb();
  });

  it('adds a file per publish for snapshots and compacts so file counts stay bounded', async () => {
    for (let i = 0; i < MAX_APPEND_FILES + 4; i++) {
      await w.insertReportSnapshot({ report: 'overview', params: { i }, data: { total: i } }, ctx());
      await w.publishLake(['report_overview']);
      expect(filesOf('report_overview').length).toBeLessThanOrEqual(MAX_APPEND_FILES);
    }
    expect(await differences('report_overview')).toBe(0);
    const [r] = await w.query(`SELECT count(*) AS n FROM (${lakeSelect('report_overview')})`);
    expect(r).toEqual({ n: MAX_APPEND_FILES + 4 });
    // old generations are pruned
    expect(readdirSync(join(p.lakePath, '_generations', 'report_overview')).length).toBeLessThanOrEqual(3);
  });

  it('a reader during publishes sees whole publishes (resolved generation), never a half file, and crmsync reads never fail', async () => {
    // A reader's DuckDB, as `crmsync query` opens it (the catalog, or an empty one before the first publish).
    await withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb'), whenMissing: 'empty' }, async (reader) => {
      const published = new Set<number>();
      const count = async () => Number((await w.query(`SELECT count(*) AS n FROM (${lakeSelect('contacts')})`))[0]!.n);
      published.add(await count());
      let stop = false;
      const seen: number[] = [];
      let direct = 0;
      const throughLink = `SELECT count(*) AS n FROM read_parquet('${join(p.lakePath, 'contacts')}/**/*.parquet', hive_partitioning = true)`;
      const readLoop = (async () => {
        while (!stop) {
          // resolve the current generation once, then read it
          const resolved = `'${realpathSync(join(p.lakePath, 'contacts'))}/**/*.parquet'`;
          seen.push(Number((await reader.query(`SELECT count(*) AS n FROM read_parquet(${resolved}, hive_partitioning = true)`))[0]!.n));
          // Through the symlink, as an analyst might: a read that listed the files just before a
          // swap may find one gone (a plain missing-file error), never another file's content.
          await reader.query(throughLink).catch((err: unknown) => {
            expect(isLakeRace(err, p.lakePath), String(err)).toBe(true);
            expect(String(err)).not.toMatch(/TProtocolException|don't know what type|magic bytes/);
          });
          // crmsync's own readers read again after such a race: they never fail.
          await withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb'), whenMissing: 'empty' }, (r) => r.query(throughLink));
          direct += 1;
        }
      })();
      for (let round = 0; round < 6; round++) {
        const start = 200_001 + round * 40;
        await w.loadContacts(
          Array.from({ length: 40 }, (_, i) => makeContact(start + i)),
          ctx(),
        );
        await w.loadContacts([makeContact(10 + round, { city: `Round ${round}` })], ctx());
        await w.publishLake(['contacts']);
        published.add(await count());
      }
      stop = true;
      await readLoop;
      expect(seen.length).toBeGreaterThan(0);
      expect(direct).toBeGreaterThan(0);
      for (const n of seen) expect(published).toContain(n);
    });
  });

  it('rewrites a lake written with another bucket size in this one, at its next publish', async () => {
    // A generation as crmsync wrote it with 50,000 ids a bucket, and a manifest that does not say.
    await w.publishLake();
    const legacy = join(p.lakePath, '_generations', 'contacts', '000090');
    for (const b of [0, 1, 2, 3, 4]) {
      const dir = join(legacy, `id_bucket=${b}`);
      mkdirSync(dir, { recursive: true });
      await w.query(`COPY (${lakeSelectSql('contacts')} WHERE id >= ${b * 50_000} AND id < ${(b + 1) * 50_000}) TO '${join(dir, 'data_0.parquet')}' (FORMAT parquet)`);
    }
    rmSync(join(p.lakePath, 'contacts'));
    symlinkSync(relative(p.lakePath, legacy), join(p.lakePath, 'contacts'));
    const manifest = (await readLakeManifest(p.lakePath))!;
    delete manifest.tables.contacts!.bucketSize;
    await writeLakeManifest(p.lakePath, manifest);
    expect(await differences('contacts')).toBe(0);

    // A change in one bucket, published alone as a scan publishes: no file of the old layout is
    // linked into the new generation (its rows would be there twice). The log says why it takes longer.
    await w.loadContacts([makeContact(S + 11, { city: 'Relaid' })], ctx());
    const lines: { table?: string; msg?: string }[] = [];
    const logger = createJsonLogger('info', {}, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as { table?: string }), done()) }));
    await publishLake({ connection: w.connection, lakePath: p.lakePath, logger }, ['contacts'], { buckets: [1] });
    expect(lines.filter((l) => l.msg?.includes('rewriting')).map((l) => l.table)).toEqual(['contacts']);
    expect(await differences('contacts')).toBe(0);
    const buckets = readdirSync(realpathSync(join(p.lakePath, 'contacts'))).sort();
    const held = await w.query(`SELECT DISTINCT 'id_bucket=' || (id // ${S}) AS b FROM contacts ORDER BY b`);
    expect(buckets).toEqual(held.map((r) => r.b).sort());
    expect((await readLakeManifest(p.lakePath))!.tables.contacts!.bucketSize).toBe(S);
    // From then on, a publish links the untouched buckets again.
    const bucket0 = () => {
      const dir = join(realpathSync(join(p.lakePath, 'contacts')), 'id_bucket=0');
      const files = readdirSync(dir);
      expect(files).toHaveLength(1);
      return { name: files[0]!, ino: statSync(join(dir, files[0]!)).ino };
    };
    const before = bucket0();
    await w.loadContacts([makeContact(S + 12, { city: 'Again' })], ctx());
    await publishLake({ connection: w.connection, lakePath: p.lakePath, logger }, ['contacts'], { buckets: [1] });
    expect(lines.filter((l) => l.msg?.includes('rewriting'))).toHaveLength(1);
    // The same file, linked under the same name; the rewritten bucket's file has a new name.
    expect(bucket0()).toEqual(before);
    expect(await differences('contacts')).toBe(0);
  });

  it('rebuilds a table whose generation was removed by hand', async () => {
    rmSync(realpathSync(join(p.lakePath, 'contacts')), { recursive: true, force: true });
    await w.publishLake(['contacts']);
    expect(await differences('contacts')).toBe(0);
  });

  it('the catalog serves the tables and analyst views, read-only', async () => {
    await w.publishLake();
    await withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb') }, async (reader) => {
      expect(reader.source).toMatchObject({ kind: 'catalog' });
      const [a] = await reader.query('SELECT count(*) AS n FROM contacts_current');
      const [b] = await w.query('SELECT count(*) AS n FROM contacts_current');
      expect(a).toEqual(b);
      await expect(reader.loadContacts([makeContact(1)], ctx())).rejects.toMatchObject({ code: 'WAREHOUSE_READ_ONLY' });
    });
  });
});

describe('withCatalog after a publish raced a read', () => {
  it('reads again on a fresh DuckDB when a lake file went away under the read, and not for other errors', async () => {
    const dir = join(tmpdir(), `crmsync-race-${process.pid}-${Date.now()}`);
    mkdirSync(dir, { recursive: true });
    try {
      const catalogPath = join(dir, 'catalog.duckdb');
      let calls = 0;
      const value = await withCatalog({ catalogPath, whenMissing: 'empty' }, async () => {
        calls += 1;
        if (calls === 1) throw new Error(`IO Error: No files found that match the pattern "${join(dir, 'contacts', 'id_bucket=0', 'data-000007.parquet')}"`);
        return 'read';
      });
      expect({ value, calls }).toEqual({ value: 'read', calls: 2 });
      calls = 0;
      await expect(
        withCatalog({ catalogPath, whenMissing: 'empty' }, async () => {
          calls += 1;
          throw new Error('Binder Error: Referenced column "nope" not found');
        }),
      ).rejects.toThrow(/nope/);
      expect(calls).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
