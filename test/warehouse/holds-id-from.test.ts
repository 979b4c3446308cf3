import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { holdsIdFrom } from '../../src/warehouse/load-contacts.js';
import { inTransaction, run, withRecordInCommit } from '../../src/warehouse/sql-run.js';
import { makeContact } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

let t: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };
beforeAll(async () => {
  t = await openTempWarehouse();
});
afterAll(async () => {
  await closeTempWarehouse(t);
});

describe('the append-or-merge decision and the record committed with a load', () => {
  it('holdsIdFrom says whether any contact, tombstoned ones too, has an id at or above the given one', async () => {
    expect(await holdsIdFrom(t.w.connection, 1)).toBe(false);
    await t.w.loadContacts(
      [10, 20, 30].map((i) => makeContact(i)),
      ctx(),
    );
    expect(await holdsIdFrom(t.w.connection, 31)).toBe(false);
    expect(await holdsIdFrom(t.w.connection, 30)).toBe(true);
    expect(await holdsIdFrom(t.w.connection, 11)).toBe(true);
    await run(t.w.connection, 'UPDATE contacts SET _deleted_at = now() WHERE id = 30');
    expect(await holdsIdFrom(t.w.connection, 25)).toBe(true);
    // New ids below one held take the merge: loaded once each, the held ones untouched.
    const stats = await t.w.loadContacts(
      [15, 25, 40].map((i) => makeContact(i)),
      ctx(),
    );
    expect(stats).toMatchObject({ inserted: 3, updated: 0 });
    const rows = await t.w.query('SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts');
    expect(rows[0]).toEqual({ n: 6, d: 6 });
  });

  it('refuses a load that commits a second transaction after the one its record joined', async () => {
    const c = t.w.connection;
    await run(c, 'CREATE TABLE rec_test (v INTEGER)');
    const twice = withRecordInCommit(
      c,
      () => run(c, 'INSERT INTO rec_test VALUES (1)'),
      async () => {
        await inTransaction(c, () => run(c, 'INSERT INTO rec_test VALUES (2)'));
        await inTransaction(c, () => run(c, 'INSERT INTO rec_test VALUES (3)'));
      },
    );
    await expect(twice).rejects.toThrow(/second transaction/);
    // A load that commits none: the record commits on its own.
    await withRecordInCommit(
      c,
      () => run(c, 'INSERT INTO rec_test VALUES (4)'),
      async () => undefined,
    );
    expect(await t.w.query('SELECT list(v ORDER BY v) AS v FROM rec_test')).toEqual([{ v: [1, 2, 4] }]);
  });
});
