import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { LAKE_COMPRESSIONS } from '../../src/warehouse/lake-compression.js';
import { lakeSelectSql } from '../../src/warehouse/lake-layout.js';
import { publishLake } from '../../src/warehouse/publish-lake.js';
import { makeContact } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
  await w.loadContacts(
    Array.from({ length: 300 }, (_, i) => makeContact(i + 1)),
    ctx(),
  );
});
afterAll(() => closeTempWarehouse({ p, w }));

// What parquet_metadata names each codec (lz4 is written as LZ4_RAW, the one readers take).
const WRITTEN = { zstd: 'ZSTD', 'zstd-1': 'ZSTD', snappy: 'SNAPPY', lz4: 'LZ4_RAW' } as const;

describe('publishLake compression', () => {
  it.each(LAKE_COMPRESSIONS)('%s: every column chunk written with it, and the lake reads back the same rows', async (codec) => {
    const lakePath = join(p.dir, `lake-${codec}`);
    await publishLake({ connection: w.connection, lakePath, compression: codec }, ['contacts']);
    const glob = `'${join(lakePath, 'contacts')}/**/*.parquet'`;
    expect(await w.query(`SELECT DISTINCT compression FROM parquet_metadata(${glob})`)).toEqual([{ compression: WRITTEN[codec] }]);
    const [diff] = await w.query(`SELECT count(*) AS n FROM (${lakeSelectSql('contacts')} EXCEPT ALL SELECT * EXCLUDE (id_bucket) FROM read_parquet(${glob}, hive_partitioning = true))`);
    expect(Number(diff!.n)).toBe(0);
  });
});
