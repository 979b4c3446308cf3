import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, withWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import { formatRows } from '../../src/warehouse/format-rows.js';
import { runQuery } from '../../src/warehouse/run-query.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  p = tempPaths();
  await withWarehouse({ ...p, write: true }, (x) =>
    x.loadContacts(
      Array.from({ length: 30 }, (_, i) => makeContact(i + 1, { first_name: i === 0 ? 'Quote "me", please' : null })),
      ctx(),
    ),
  );
  w = await openWarehouse({ ...p, readOnly: true });
});
afterAll(async () => {
  await w?.close();
  p?.cleanup();
});

describe('runQuery and formatRows', () => {
  it('stops after maxRows and says so', async () => {
    const r = await runQuery(w.connection, 'SELECT id FROM contacts ORDER BY id', 5);
    expect(r.rows.map((x) => x.id)).toEqual([1, 2, 3, 4, 5]);
    expect(r.truncated).toBe(true);
    expect((await runQuery(w.connection, 'SELECT id FROM contacts', 100)).truncated).toBe(false);
  });

  it('writes RFC 4180 CSV, JSON with dates as ISO, and an aligned table', async () => {
    const r = await runQuery(w.connection, 'SELECT id, first_name, created_at, tag_ids FROM contacts WHERE id <= 2 ORDER BY id', 10);
    expect(formatRows(r.columns, r.rows, 'csv')).toBe('id,first_name,created_at,tag_ids\n' + '1,"Quote ""me"", please",2024-01-01T01:00:00.000Z,"[2,30]"\n' + '2,,2024-01-01T02:00:00.000Z,"[3,30]"\n');
    expect(JSON.parse(formatRows(r.columns, r.rows, 'json'))[1]).toEqual({ id: 2, first_name: null, created_at: '2024-01-01T02:00:00.000Z', tag_ids: [3, 30] });
    const table = formatRows(r.columns, r.rows, 'table').split('\n');
    expect(table[0]).toMatch(/^id \| first_name +\| created_at +\| tag_ids/);
    expect(table[3]).toContain('NULL');
    expect(new Set([table[0]!, table[2]!, table[3]!].map((l) => l.indexOf('|')))).toEqual(new Set([table[0]!.indexOf('|')]));
    expect(table[1]).toMatch(/^-+-\+-/);
  });

  it('shows dates, times and intervals as DuckDB writes them, not as instants or microseconds', async () => {
    const sql = "SELECT DATE '2020-01-02' AS d, TIME '10:11:12.5' AS t, INTERVAL 3 DAY AS iv, [DATE '2021-03-04'] AS ds, {'at': TIME '01:02:03'} AS st, TIMESTAMP '2020-01-02 03:04:05' AS ts";
    const r = await runQuery(w.connection, sql, 10);
    expect(r.rows[0]).toEqual({ d: '2020-01-02', t: '10:11:12.5', iv: '3 days', ds: ['2021-03-04'], st: { at: '01:02:03' }, ts: new Date('2020-01-02T03:04:05Z') });
    expect(formatRows(r.columns, r.rows, 'csv').split('\n')[1]).toBe('2020-01-02,10:11:12.5,3 days,"[""2021-03-04""]","{""at"":""01:02:03""}",2020-01-02T03:04:05.000Z');
  });

  it('turns DuckDB errors and writes on the read-only file into an error that says what to do', async () => {
    await expect(runQuery(w.connection, 'SELEC 1', 10)).rejects.toMatchObject({ code: 'WAREHOUSE_QUERY_FAILED' });
    // A write is refused before DuckDB sees it (the file is read-only too).
    await expect(runQuery(w.connection, 'DELETE FROM contacts', 10)).rejects.toMatchObject({ code: 'QUERY_NOT_READ_ONLY' });
    expect((await w.query('SELECT count(*) AS n FROM contacts'))[0]).toEqual({ n: 30 });
  });
});
