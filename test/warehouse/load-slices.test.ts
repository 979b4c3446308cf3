import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/crm/types.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { loadContacts, MAX_DOC_BYTES } from '../../src/warehouse/load-contacts.js';
import type { LoadContext } from '../../src/warehouse/types.js';
import { listRef, makeContact, tagRef } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

// Loads cross many pipelined slices (and, for new contacts, several flushes to the tables) in
// warehouse `sliced`, and go in one slice in `whole`: both must hold exactly the same rows.
const TZ = 'America/New_York';
const SLICED = { siteTimeZone: TZ, sliceRows: 3, flushRows: 7 };
let a: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };
let b: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };

beforeAll(async () => {
  a = await openTempWarehouse({ siteTimeZone: TZ });
  b = await openTempWarehouse({ siteTimeZone: TZ });
});
afterAll(async () => {
  await closeTempWarehouse(a);
  await closeTempWarehouse(b);
});

function contact(i: number, version = 0): Contact {
  if (version === 0) return makeContact(i);
  return makeContact(i, { first_name: `V${version}`, updated_at: new Date(Date.UTC(2026, 0, version)).toISOString(), tags: [tagRef(version)], lists: [listRef(2), listRef(1)] });
}

async function loadBoth(contacts: readonly Contact[], c: LoadContext) {
  const sliced = await loadContacts(a.w.connection, contacts, c, SLICED);
  const whole = await b.w.loadContacts(contacts, c);
  expect(sliced).toEqual(whole);
  return sliced;
}

async function expectSameTables() {
  for (const sql of [
    'SELECT * FROM contacts ORDER BY id',
    'SELECT * FROM contacts_history ORDER BY id, valid_from',
    'SELECT * FROM contact_tags ORDER BY contact_id, tag_id',
    'SELECT * FROM contact_lists ORDER BY contact_id, list_id',
    'SELECT * FROM _lake_dirty ORDER BY ALL',
  ]) {
    const rows = await a.w.query(sql);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(await b.w.query(sql));
  }
}

describe('loadContacts across pipelined slices', () => {
  it('new contacts (many slices, several flushes) land exactly as in one slice', async () => {
    const odd = makeContact(17, { first_name: 'A\x1f\x1eb', city: 'Zürich 東京 🚀', custom_values: { z: 1, a: [1, 2.5, null] }, created_at: '2024-03-10 01:30:00' });
    const cs = Array.from({ length: 40 }, (_, i) => (i + 1 === 17 ? odd : contact(i + 1)));
    expect(await loadBoth([...cs, contact(100_001)], ctx())).toEqual({ inserted: 41, updated: 0, unchanged: 0, deleted: 0 });
    expect((await a.w.query('SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts'))[0]).toEqual({ n: 41, d: 41 });
    await expectSameTables();
  });

  it('a reload with changes and new ids below the highest (the merge path) matches too', async () => {
    const cs = [...Array.from({ length: 40 }, (_, i) => contact(i + 1, (i + 1) % 5 === 0 ? 3 : 0)), ...Array.from({ length: 11 }, (_, i) => contact(50 + i))];
    expect(await loadBoth(cs, ctx(new Date('2026-02-01T00:00:00Z')))).toEqual({ inserted: 11, updated: 9, unchanged: 31, deleted: 0 }); // every 5th, and 17 (odd before);
    expect(await loadBoth(cs, ctx())).toEqual({ inserted: 0, updated: 0, unchanged: 51, deleted: 0 });
    await expectSameTables();
  });

  it('a contact rejected in a later slice rolls the whole load back', async () => {
    const before = await a.w.query('SELECT count(*) AS n FROM contacts');
    const big = makeContact(200_010);
    big.raw = { ...big.raw, note: 'x'.repeat(MAX_DOC_BYTES) };
    const cs = Array.from({ length: 20 }, (_, i) => (i === 9 ? big : makeContact(200_001 + i)));
    await expect(loadContacts(a.w.connection, cs, ctx(), SLICED)).rejects.toMatchObject({ code: 'WAREHOUSE_INPUT_INVALID' });
    expect(await a.w.query('SELECT count(*) AS n FROM contacts')).toEqual(before);
    expect(await a.w.query('SELECT count(*) AS n FROM contacts_history WHERE id > 200000')).toEqual([{ n: 0 }]);
    // the connection is still usable
    expect(await loadContacts(a.w.connection, cs.slice(0, 9), ctx(), SLICED)).toMatchObject({ inserted: 9 });
  });
});
