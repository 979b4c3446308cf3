import { join } from 'node:path';
import { Writable } from 'node:stream';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJsonLogger, type Logger } from '../../src/logger.js';
import { openWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import { BUCKETED_LAKE_TABLES, lakeSelectSql } from '../../src/warehouse/lake-layout.js';
import { CONTACT_BUCKET_SIZE } from '../../src/warehouse/contact-columns.js';
import { publishLake } from '../../src/warehouse/publish-lake.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths } from './temp-warehouse.js';

// A publish in two lanes: `contacts` on the writer's connection, the other contact tables on a
// second one at the same time (the end of a scan, when nothing else wants the cores).
const S = CONTACT_BUCKET_SIZE;
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
let lines: { msg?: string; second?: string[]; tables?: string[]; err?: string }[];

function capture(): Logger {
  return createJsonLogger('debug', {}, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]), done()) }));
}

beforeAll(async () => {
  lines = [];
  p = tempPaths();
  w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, logger: capture() });
  await w.migrate();
});
afterAll(async () => {
  await w.close();
  p.cleanup();
});

/** Rows of `table` in DuckDB and not in the lake, plus rows in the lake and not in DuckDB. */
async function differences(table: string): Promise<number> {
  const lake = `SELECT * EXCLUDE (id_bucket) FROM read_parquet('${join(p.lakePath, table)}/**/*.parquet', hive_partitioning = true)`;
  const [r] = await w.query(`SELECT count(*) AS n FROM ((${lakeSelectSql(table)} EXCEPT ALL ${lake}) UNION ALL (${lake} EXCEPT ALL ${lakeSelectSql(table)}))`);
  return Number(r!.n);
}

const loadTwoBuckets = (city: string) =>
  w.loadContacts([...Array.from({ length: 40 }, (_, i) => makeContact(i + 1, { city })), ...Array.from({ length: 40 }, (_, i) => makeContact(S + i + 1, { city }))], ctx());

describe('publishLake in two lanes', () => {
  it('writes the other contact tables on a second connection, and the lake holds what DuckDB holds', async () => {
    await loadTwoBuckets('First');
    await w.publishLake(BUCKETED_LAKE_TABLES, { lanes: 2 });
    expect(lines.filter((l) => l.msg === 'lake: publishing in two lanes').map((l) => l.second)).toEqual([['contacts_history', 'contact_tags', 'contact_lists']]);
    for (const t of BUCKETED_LAKE_TABLES) expect(await differences(t), t).toBe(0);
    expect(await w.query(`SELECT count(*) AS n FROM _lake_dirty`)).toEqual([{ n: 0 }]);

    // An edit of one bucket: both lanes write only it; the lake follows.
    await w.loadContacts([makeContact(S + 3, { city: 'Edited', tags: [] })], ctx());
    await w.publishLake(BUCKETED_LAKE_TABLES, { buckets: [1], lanes: 2 });
    for (const t of BUCKETED_LAKE_TABLES) expect(await differences(t), t).toBe(0);
    expect(await w.query(`SELECT city FROM read_parquet('${join(p.lakePath, 'contacts')}/**/*.parquet') WHERE id = ${S + 3}`)).toEqual([{ city: 'Edited' }]);
  });

  it('takes one lane when only one table has anything to write', async () => {
    lines.length = 0;
    let opened = 0;
    // Only `contacts` is dirty: a whole-table write outside the loads marks it alone.
    await w.query(`INSERT INTO _lake_dirty (table_name, part) VALUES ('contacts', '0')`);
    await publishLake(
      {
        connection: w.connection,
        lakePath: p.lakePath,
        openLane: () => {
          opened++;
          return Promise.reject(new Error('not wanted'));
        },
      },
      BUCKETED_LAKE_TABLES,
      { lanes: 2 },
    );
    expect(opened).toBe(0);
    expect(await w.query(`SELECT count(*) AS n FROM _lake_dirty`)).toEqual([{ n: 0 }]);
  });

  it('writes again on the writer connection whatever the second lane failed to write', async () => {
    lines.length = 0;
    await loadTwoBuckets('Second');
    // A connection of another, empty database: every statement of the second lane fails.
    const elsewhere = await DuckDBInstance.create(':memory:');
    let lane: DuckDBConnection | undefined;
    try {
      await publishLake(
        {
          connection: w.connection,
          lakePath: p.lakePath,
          logger: capture(),
          openLane: async () => (lane = await elsewhere.connect()),
        },
        BUCKETED_LAKE_TABLES,
        { lanes: 2 },
      );
      const warned = lines.filter((l) => l.msg?.includes('second publish lane failed'));
      expect(warned.map((l) => l.tables)).toEqual([['contacts_history', 'contact_tags', 'contact_lists']]);
      expect(warned[0]!.err).toMatch(/contacts_history/);
      for (const t of BUCKETED_LAKE_TABLES) expect(await differences(t), t).toBe(0);
      expect(await w.query(`SELECT count(*) AS n FROM _lake_dirty`)).toEqual([{ n: 0 }]);
      // The lane's connection is closed after the publish.
      await expect(lane!.run('SELECT 1')).rejects.toThrow();
    } finally {
      elsewhere.closeSync();
    }
  });
});
