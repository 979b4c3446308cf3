import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/crm/types.js';
import { CONTACT_BUCKET_SIZE } from '../../src/warehouse/contact-columns.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { MAX_DOC_BYTES } from '../../src/warehouse/load-contacts.js';
import type { LoadContext } from '../../src/warehouse/types.js';
import { listRef, makeContact, tagRef } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

// loadContacts appends without a diff when every id is above the highest held, and merges
// otherwise. Warehouse `append` takes the first path and `merge` (which already holds a higher
// id) the second for the same contacts: both must write exactly the same rows.
const TZ = 'America/New_York';
const HIGH = 1_000_000;
let a: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };
let m: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };

beforeAll(async () => {
  a = await openTempWarehouse({ siteTimeZone: TZ });
  m = await openTempWarehouse({ siteTimeZone: TZ });
  await m.w.loadContacts([makeContact(HIGH)], ctx());
});
afterAll(async () => {
  await closeTempWarehouse(a);
  await closeTempWarehouse(m);
});

async function loadBoth(contacts: readonly Contact[], c: LoadContext) {
  const appended = await a.w.loadContacts(contacts, c);
  expect(appended).toEqual(await m.w.loadContacts(contacts, c));
  return appended;
}

async function expectSameTables() {
  for (const [sql, id] of [
    ['SELECT * FROM contacts', 'id'],
    ['SELECT * FROM contacts_history', 'id'],
    ['SELECT * FROM contact_tags', 'contact_id'],
    ['SELECT * FROM contact_lists', 'contact_id'],
  ] as const) {
    const rows = await a.w.query(`${sql} ORDER BY ALL`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(await m.w.query(`${sql} WHERE ${id} <> ${HIGH} ORDER BY ALL`));
  }
  expect(await a.w.query('SELECT * FROM _lake_dirty ORDER BY ALL')).toEqual(await m.w.query(`SELECT * FROM _lake_dirty WHERE part <> '${Math.floor(HIGH / CONTACT_BUCKET_SIZE)}' ORDER BY ALL`));
}

describe('loadContacts: the append path writes what the merge path writes', () => {
  it('new contacts, odd values included, land the same either way', async () => {
    const odd = makeContact(17, {
      first_name: 'A\x1f\x1eb',
      last_name: '\x1d',
      city: 'Zürich 東京 🚀',
      phone: null,
      total_points: Number.NaN,
      tags: [tagRef(9), tagRef(3), tagRef(9)],
      lists: [],
      custom_values: { z: 'x\x1fy', a: [1, 2.5, null], mid: 1e21 },
      created_at: '2024-03-10 01:30:00',
      date_of_birth: '0000-00-00',
    });
    odd.raw = { ...odd.raw, note: 'raw \x1c|\x1d|\x1e|\x1f', n: 1e-7 };
    const cs = Array.from({ length: 120_000 / 1000 }, (_, i) => (i + 1 === 17 ? odd : makeContact((i + 1) * 997)));
    expect(await loadBoth(cs, ctx())).toEqual({ inserted: cs.length, updated: 0, unchanged: 0, deleted: 0 });
    await expectSameTables();
    // raw is kept as JSON.stringify wrote it
    const raw = (await a.w.query('SELECT raw::VARCHAR AS r FROM contacts WHERE id = 17'))[0]!.r;
    expect(raw).toBe(JSON.stringify(odd.raw));
  });

  it('and later changes merge the same way in both', async () => {
    const cs = Array.from({ length: 40 }, (_, i) => makeContact((i + 1) * 997, i % 5 === 0 ? { first_name: 'Changed', tags: [tagRef(2)], lists: [listRef(2), listRef(1)] } : {}));
    expect(await loadBoth(cs, ctx(new Date('2026-02-01T00:00:00Z')))).toEqual({ inserted: 1, updated: 8, unchanged: 31, deleted: 0 }); // 17 * 997 was not loaded (17 was)
    await expectSameTables();
  });

  it('a rejected contact leaves nothing behind on the append path', async () => {
    const before = await a.w.query('SELECT count(*) AS n FROM contacts');
    const big = makeContact(2_000_010);
    big.raw = { ...big.raw, note: 'x'.repeat(MAX_DOC_BYTES) };
    const cs = Array.from({ length: 20 }, (_, i) => (i === 9 ? big : makeContact(2_000_001 + i)));
    await expect(a.w.loadContacts(cs, ctx())).rejects.toMatchObject({ code: 'WAREHOUSE_INPUT_INVALID' });
    expect(await a.w.query('SELECT count(*) AS n FROM contacts')).toEqual(before);
    expect(await a.w.loadContacts(cs.slice(0, 9), ctx())).toMatchObject({ inserted: 9 });
  });
});
