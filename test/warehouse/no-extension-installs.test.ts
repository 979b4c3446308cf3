import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, withCatalog, type WarehouseHandle } from '../../src/warehouse/index.js';
import { runQuery } from '../../src/warehouse/run-query.js';
import { tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
beforeAll(() => {
  p = tempPaths();
});
afterAll(() => p?.cleanup());

async function setting(w: WarehouseHandle): Promise<unknown> {
  const [r] = await w.query(`SELECT current_setting('autoinstall_known_extensions') AS v`);
  return r!.v;
}

// Only `crmsync query` turned DuckDB's extension downloads off: a push of `--from nosuch.xlsx`
// made DuckDB fetch its excel extension from the network, and fail with an error naming no fix.
describe('DuckDB never downloads an extension', () => {
  it('is off in the writer, a read-only warehouse and the readers’ catalog', async () => {
    const writer = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath });
    try {
      expect(await setting(writer)).toBe(false);
      await writer.migrate();
    } finally {
      await writer.close();
    }
    const reader = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, readOnly: true });
    try {
      expect(await setting(reader)).toBe(false);
    } finally {
      await reader.close();
    }
    await withCatalog({ catalogPath: join(p.dir, 'no-catalog.duckdb'), whenMissing: 'empty' }, async (r) => expect(await setting(r)).toBe(false));
  });

  it('needs none for what crmsync itself reads and writes: json, parquet and icu are built in', async () => {
    const w = await openWarehouse({ dbPath: ':memory:', lakePath: p.lakePath });
    try {
      const built = await w.query(`SELECT extension_name AS name, install_mode AS mode FROM duckdb_extensions() WHERE extension_name IN ('json', 'parquet', 'icu') AND loaded ORDER BY 1`);
      expect(built).toEqual(['icu', 'json', 'parquet'].map((name) => ({ name, mode: 'STATICALLY_LINKED' })));
    } finally {
      await w.close();
    }
  });

  it("turns a query's need of an extension into the files `crmsync query` reads", async () => {
    await withCatalog({ catalogPath: join(p.dir, 'no-catalog.duckdb'), whenMissing: 'empty' }, async (r) => {
      const e = await runQuery(r.connection, `SELECT * FROM '${join(p.dir, 'people.xlsx')}'`, 10).then(
        () => new Error('the query ran'),
        (err: unknown) => err as Error,
      );
      expect(e.message).toMatch(/DuckDB would need its excel extension, and crmsync installs none; read the warehouse's tables, or CSV, Parquet or JSON files \(read_csv/);
      expect(e.message).not.toMatch(/INSTALL/);
    });
  });
});
