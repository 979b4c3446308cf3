import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import type { LoadContext } from '../../src/warehouse/types.js';
import { makeContact, tagRef } from './contact-factory.js';
import { closeTempWarehouse, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

// Every row of contacts_history over a sequence of loads (append, merge, all-new-below-highest),
// changes (with and without an updated_at bump), tombstones (one dated before its version began),
// a reconciliation and comebacks, compared with the rows the table-held history wrote before the
// open versions moved onto `contacts` (the fixture, written by that code with UPDATE_FIXTURE=1).
const FIXTURE = join(import.meta.dirname, 'fixtures', 'history-rows.json');

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse({ siteTimeZone: 'UTC' }));
});
afterAll(() => closeTempWarehouse({ p, w }));

let n = 0;
const at = (day: number): LoadContext => ({ loadId: `L${++n}`, syncedAt: new Date(Date.UTC(2026, 5, day, 12)) });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => makeContact(from + i));
const HISTORY = 'SELECT * FROM contacts_history ORDER BY id, valid_from, valid_to NULLS LAST';

async function snapshot(step: string): Promise<unknown> {
  const rows = await w.query(HISTORY);
  const asOf = await w.query(`SELECT id, first_name, tag_ids FROM contacts_as_of(TIMESTAMPTZ '2026-06-05 00:00:00+00') ORDER BY id`);
  const counts = await w.query('SELECT kind, id, members, previous_members FROM tag_list_member_counts ORDER BY ALL');
  return JSON.parse(JSON.stringify({ step, rows, asOf, counts }));
}

describe('contacts_history rows', () => {
  it('are the SCD2 rows the table-held history wrote, step by step', async () => {
    const steps: unknown[] = [];
    const runs = async (day: number) =>
      w.query(
        `INSERT INTO _sync_runs (run_id, stream, mode, status, started_at, finished_at) VALUES ('r${day}', 'contacts', 'full', 'succeeded', TIMESTAMPTZ '2026-06-${String(day).padStart(2, '0')} 12:30:00+00', TIMESTAMPTZ '2026-06-${String(day).padStart(2, '0')} 12:30:00+00')`,
      );
    await w.loadContacts(range(1, 40), at(1));
    steps.push(await snapshot('append'));
    await w.loadContacts([...range(41, 50), makeContact(5)], at(2));
    await w.loadContacts(range(100, 110), at(2));
    await w.loadContacts(range(61, 70), at(2));
    await runs(2);
    steps.push(await snapshot('merge and all-new below the highest'));
    await w.loadContacts([makeContact(3, { first_name: 'Third', updated_at: '2026-06-03T08:00:00.000Z' }), makeContact(4, { tags: [tagRef(7)] }), makeContact(5)], at(3));
    steps.push(await snapshot('changes'));
    await w.tombstoneContacts([6, 7], { ...at(4), deletedAt: new Date('2026-06-04T01:00:00Z') });
    await w.tombstoneContacts([8], { ...at(4), deletedAt: new Date('2020-01-01T00:00:00Z') });
    await w.tombstoneContactsNotIn(
      range(1, 20)
        .map((c) => c.id)
        .filter((id) => id !== 9),
      20,
      at(4),
    );
    await runs(4);
    steps.push(await snapshot('tombstones'));
    await w.loadContacts([makeContact(6), makeContact(9, { first_name: 'Back' }), makeContact(3, { first_name: 'Thrice', updated_at: '2026-06-05T08:00:00.000Z' })], at(5));
    steps.push(await snapshot('comebacks'));
    await w.tombstoneContacts([3, 6], at(6));
    await w.loadContacts([makeContact(3, { first_name: 'Again' }), makeContact(6), makeContact(111)], at(7));
    await w.loadContacts([makeContact(6, { tags: [] }), makeContact(111, { first_name: 'Edited' })], at(7));
    await runs(7);
    steps.push(await snapshot('second comebacks'));
    if (process.env.UPDATE_FIXTURE === '1') writeFileSync(FIXTURE, JSON.stringify(steps, null, 1) + '\n');
    expect(steps).toEqual(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  });
});
