import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { LAKE_COMPRESSIONS } from '../../src/warehouse/lake-compression.js';
import { lakeSelectSql } from '../../src/warehouse/lake-layout.js';
import { LAKE_ROW_GROUP_SIZE, publishLake } from '../../src/warehouse/publish-lake.js';
import { makeContact } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

// Two full row groups and one row more, all in the first contact bucket.
const ROWS = 2 * LAKE_ROW_GROUP_SIZE + 1;
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
  await w.loadContacts(
    Array.from({ length: ROWS }, (_, i) => makeContact(i + 1)),
    ctx(),
  );
});
afterAll(() => closeTempWarehouse({ p, w }));

// What parquet_metadata names each codec (lz4 is written as LZ4_RAW, the one readers take).
const WRITTEN = { zstd: 'ZSTD', 'zstd-1': 'ZSTD', snappy: 'SNAPPY', lz4: 'LZ4_RAW' } as const;

describe('publishLake files', () => {
  it.each(LAKE_COMPRESSIONS)('%s: every column chunk written with it, and the lake reads back the same rows', async (codec) => {
    const lakePath = join(p.dir, `lake-${codec}`);
    await publishLake({ connection: w.connection, lakePath, compression: codec }, ['contacts']);
    const glob = `'${join(lakePath, 'contacts')}/**/*.parquet'`;
    expect(await w.query(`SELECT DISTINCT compression FROM parquet_metadata(${glob})`)).toEqual([{ compression: WRITTEN[codec] }]);
    const [diff] = await w.query(`SELECT count(*) AS n FROM (${lakeSelectSql('contacts')} EXCEPT ALL SELECT * EXCLUDE (id_bucket) FROM read_parquet(${glob}, hive_partitioning = true))`);
    expect(Number(diff!.n)).toBe(0);
  });

  it('writes the contacts in row groups of LAKE_ROW_GROUP_SIZE rows, which bounds what the writer buffers', async () => {
    const lakePath = join(p.dir, 'lake-row-groups');
    await publishLake({ connection: w.connection, lakePath }, ['contacts']);
    const groups = await w.query(
      `SELECT row_group_num_rows AS n FROM parquet_metadata('${join(lakePath, 'contacts')}/**/*.parquet') GROUP BY file_name, row_group_id, row_group_num_rows ORDER BY row_group_id`,
    );
    expect(groups.map((g) => Number(g.n))).toEqual([LAKE_ROW_GROUP_SIZE, LAKE_ROW_GROUP_SIZE, 1]);
  });
});
