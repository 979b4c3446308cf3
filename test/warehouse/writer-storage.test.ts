import { afterEach, describe, expect, it } from 'vitest';
import { catalogName, openWarehouse, WRITER_ROW_GROUP_SIZE } from '../../src/warehouse/open-warehouse.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths, writeScope } from './temp-warehouse.js';

// The writer attaches the file with smaller row groups (a default one of contacts is ~200 MB of
// raw JSON that a checkpoint or a lake publish handles as a unit). Readers open the same file.
let p: ReturnType<typeof tempPaths> | undefined;
afterEach(() => p?.cleanup());

describe('the writer', () => {
  const rowGroups = async (path: ReturnType<typeof tempPaths>) =>
    withWarehouse({ dbPath: path.dbPath, lakePath: path.lakePath, write: true }, async (r) => {
      const rows = await r.connection.runAndReadAll(
        `SELECT row_group_id, sum(count) AS n FROM pragma_storage_info('contacts') WHERE column_name = 'id' AND segment_type <> 'VALIDITY' GROUP BY ALL ORDER BY 1`,
      );
      return rows.getRowObjects().map((x) => Number(x.n));
    });

  it('writes row groups of WRITER_ROW_GROUP_SIZE rows by default, or rowGroupSize, and readers read them', async () => {
    p = tempPaths();
    const path = p;
    await writeScope(path, (w) =>
      w.loadContacts(
        Array.from({ length: WRITER_ROW_GROUP_SIZE + 100 }, (_, i) => makeContact(i + 1)),
        ctx(),
      ),
    );
    expect(await rowGroups(path)).toEqual([WRITER_ROW_GROUP_SIZE, 100]);
    await withWarehouse({ dbPath: path.dbPath, lakePath: path.lakePath, write: true, rowGroupSize: 4096 }, (w) =>
      w.loadContacts(
        Array.from({ length: 2 * 4096 }, (_, i) => makeContact(WRITER_ROW_GROUP_SIZE + 101 + i)),
        ctx(),
      ),
    );
    // A later scope appends row groups of its own size after the checkpointed ones.
    expect(await rowGroups(path)).toEqual([WRITER_ROW_GROUP_SIZE, 100, 4096, 4096]);
    await withWarehouse({ dbPath: path.dbPath, lakePath: path.lakePath, write: true }, async (r) => {
      expect(Number((await r.connection.runAndReadAll('SELECT count(DISTINCT id) FROM contacts')).getColumns()[0]![0])).toBe(WRITER_ROW_GROUP_SIZE + 100 + 2 * 4096);
    });
  });

  it('names the catalog as DuckDB would when opening the file, and spills beside the file', async () => {
    p = tempPaths();
    const w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath });
    try {
      const [row] = (await w.connection.runAndReadAll(`SELECT current_database() AS db, current_setting('temp_directory') AS tmp`)).getRowObjects();
      expect(row).toEqual({ db: 'crm', tmp: `${p.dbPath}.tmp` });
    } finally {
      await w.close();
    }
    expect(catalogName('/data/memory.duckdb')).toBe('warehouse');
    expect(catalogName('/data/Sales-2026.db')).toBe('Sales-2026');
  });
});
