import { afterEach, describe, expect, it } from 'vitest';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import { openWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import type { ContactPage } from '../../src/warehouse/load-contact-pages.js';
import type { tempPaths } from './temp-warehouse.js';
import { closeTempWarehouse, ctx, openTempWarehouse } from './temp-warehouse.js';

/** A listing page of `n` contacts from `from`, with the row spans the fetch's scan gives. */
function page(no: number, from: number, n: number, email = (id: number) => `c${id}@example.com`): ContactPage {
  const data = Array.from({ length: n }, (_, k) => ({ id: String(from + k), email: email(from + k), status: 'subscribed', tags: [], lists: {} }));
  const body = JSON.stringify({ subscribers: { total: n, per_page: n, current_page: no, data } });
  return { page: no, body, rowSpans: scanContactPage(body, { page: no, perPage: n }, 'GET /subscribers').rowSpans! };
}

const typedLeft = async (w: WarehouseHandle): Promise<number> =>
  Number((await w.query(`SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = 'memory' AND schema_name = '_crmsync_typing'`))[0]!.n);

const open: { p?: ReturnType<typeof tempPaths>; w?: WarehouseHandle }[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await closeTempWarehouse(t);
});

describe('typing contact pages aside (real DuckDB file)', () => {
  it('types on a connection of its own while the writer holds a write transaction, writes nothing to the file, and loads as loadContactPages', async () => {
    const t = await openTempWarehouse();
    open.push(t);
    const { w } = t;
    // The writer's connection in the middle of a write, as a job of the owner is while the sink types the next batch.
    await w.connection.run(`BEGIN TRANSACTION; INSERT INTO _sync_state VALUES ('probe', '{}', now())`);
    const typed = await w.typeContactPagesAside([page(1, 1, 40), page(2, 41, 40)]);
    await w.connection.run('COMMIT');
    expect(await w.query('SELECT count(*) AS n FROM contacts')).toEqual([{ n: 0 }]);
    // A checkpoint of the file while typed rows wait for their load.
    await w.checkpoint();
    const stats = await w.loadTypedContactPages(typed, ctx());
    expect(stats).toEqual({ inserted: 80, updated: 0, unchanged: 0, deleted: 0, rejected: 0 });
    expect(await typedLeft(w)).toBe(0);

    // The same pages again through loadContactPages change nothing; a changed one through the lane merges.
    expect(await w.loadContactPages([page(1, 1, 40)], ctx())).toMatchObject({ inserted: 0, unchanged: 40 });
    const changed = await w.typeContactPagesAside([page(3, 1, 40, (id) => (id === 7 ? 'new7@example.com' : `c${id}@example.com`))]);
    expect(await w.loadTypedContactPages(changed, ctx())).toMatchObject({ inserted: 0, updated: 1, unchanged: 39 });
    expect(await w.query('SELECT email FROM contacts WHERE id = 7')).toEqual([{ email: 'new7@example.com' }]);
    expect(await w.query('SELECT count(*) AS n FROM contacts_history WHERE id = 7')).toEqual([{ n: 2 }]);
  });

  it('drops typed pages that will not be loaded, and raises an unreadable page at typing, naming the pages', async () => {
    const t = await openTempWarehouse();
    open.push(t);
    const typed = await t.w.typeContactPagesAside([page(1, 1, 10)]);
    expect(await typedLeft(t.w)).toBe(1);
    await t.w.dropTypedContactPages(typed);
    expect(await typedLeft(t.w)).toBe(0);
    await expect(t.w.typeContactPagesAside([{ page: 9, body: '{"subscribers": {"data": [{"id": 1' }])).rejects.toMatchObject({
      code: 'WAREHOUSE_PAGE_UNREADABLE',
      message: expect.stringMatching(/pages 9-9 is not readable JSON/) as unknown,
    });
    expect(await typedLeft(t.w)).toBe(0);
    expect(await t.w.query('SELECT count(*) AS n FROM contacts')).toEqual([{ n: 0 }]);
    // Only a table the lane made is read or dropped, with the figures the lane read: the name and the parts are spliced into SQL.
    const mine = await t.w.typeContactPagesAside([page(1, 1, 10)]);
    const forged = [
      { ...mine, table: 'contacts; DROP TABLE contacts' },
      { ...mine, checked: { ...mine.checked, parts: ['0); DROP TABLE contacts; --'] as unknown as number[] } },
      { ...mine, checked: { ...mine.checked, minId: Number.NaN } },
    ];
    for (const f of forged) {
      await expect(t.w.loadTypedContactPages(f, ctx())).rejects.toMatchObject({ code: 'WAREHOUSE_INPUT_INVALID' });
      await expect(t.w.dropTypedContactPages(f)).rejects.toMatchObject({ code: 'WAREHOUSE_INPUT_INVALID' });
    }
    expect(await t.w.query('SELECT count(*) AS n FROM contacts')).toEqual([{ n: 0 }]);
    expect(await t.w.loadTypedContactPages(mine, ctx())).toMatchObject({ inserted: 10 });
    expect(await typedLeft(t.w)).toBe(0);
  });

  it('refuses on a read-only handle', async () => {
    const t = await openTempWarehouse();
    await t.w.close();
    const ro = await openWarehouse({ dbPath: t.p.dbPath, lakePath: t.p.lakePath, readOnly: true });
    open.push({ p: t.p, w: ro });
    await expect(ro.typeContactPagesAside([page(1, 1, 3)])).rejects.toMatchObject({ code: 'WAREHOUSE_READ_ONLY' });
  });
});
