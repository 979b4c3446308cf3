import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { listRef, makeContact, tagRef } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

const N = 500;
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;

beforeAll(async () => {
  ({ p, w } = await openTempWarehouse({ siteTimeZone: 'America/New_York' }));
});
afterAll(() => closeTempWarehouse({ p, w }));

const page = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => makeContact(from + i));
const one = async (sql: string, params: unknown[] = []) => (await w.query(sql, params))[0] ?? {};

describe('loadContacts', () => {
  it('inserts, then a reload of the same pages changes nothing', async () => {
    const first = await w.loadContacts(page(1, N), ctx());
    expect(first).toEqual({ inserted: N, updated: 0, unchanged: 0, deleted: 0 });
    const before = await w.query('SELECT id, _load_id, _synced_at, _fingerprint FROM contacts ORDER BY id');
    const historyBefore = await one('SELECT count(*) AS n FROM contacts_history');

    // Same content re-read later (raw carries a volatile last_activity that must not count).
    const again = await w.loadContacts(page(1, N), ctx(new Date(Date.now() + 60_000)));
    expect(again).toEqual({ inserted: 0, updated: 0, unchanged: N, deleted: 0 });
    expect(await w.query('SELECT id, _load_id, _synced_at, _fingerprint FROM contacts ORDER BY id')).toEqual(before);
    expect(await one('SELECT count(*) AS n FROM contacts_history')).toEqual(historyBefore);
    expect(await one('SELECT count(*) AS n, count(DISTINCT id) AS d FROM contacts')).toEqual({ n: N, d: N });
  });

  it('a changed field updates the row and adds a history version; memberships follow', async () => {
    const changedAt = new Date('2026-03-01T12:00:00.000Z');
    const c = makeContact(7, { first_name: 'Renamed', updated_at: changedAt.toISOString(), tags: [tagRef(99)], lists: [listRef(4), listRef(2)] });
    const stats = await w.loadContacts([c, makeContact(8)], ctx());
    expect(stats).toEqual({ inserted: 0, updated: 1, unchanged: 1, deleted: 0 });
    expect(await one('SELECT first_name, tag_ids, list_ids FROM contacts WHERE id = 7')).toEqual({ first_name: 'Renamed', tag_ids: [99], list_ids: [2, 4] });
    const versions = await w.query('SELECT first_name, valid_from, valid_to FROM contacts_history WHERE id = 7 ORDER BY valid_from');
    expect(versions).toHaveLength(2);
    expect(versions[0]).toMatchObject({ first_name: makeContact(7).first_name, valid_to: changedAt });
    expect(versions[1]).toMatchObject({ first_name: 'Renamed', valid_from: changedAt, valid_to: null });
    expect(await w.query('SELECT tag_id FROM contact_tags WHERE contact_id = 7')).toEqual([{ tag_id: 99 }]);
    expect(await w.query('SELECT list_id FROM contact_lists WHERE contact_id = 7 ORDER BY list_id')).toEqual([{ list_id: 2 }, { list_id: 4 }]);
    // as-of queries see the old version before the change and the new one after
    expect(await one(`SELECT first_name FROM contacts_as_of(TIMESTAMPTZ '2026-02-01 00:00:00+00') WHERE id = 7`)).toEqual({ first_name: makeContact(7).first_name });
    expect(await one(`SELECT first_name FROM contacts_as_of(TIMESTAMPTZ '2026-03-02 00:00:00+00') WHERE id = 7`)).toEqual({ first_name: 'Renamed' });
  });

  it('a membership change that does not bump updated_at still gets a later version', async () => {
    const before = makeContact(9);
    const after = makeContact(9, { tags: [tagRef(5)] });
    expect(after.updated_at).toBe(before.updated_at);
    expect((await w.loadContacts([after], ctx(new Date('2026-04-01T00:00:00Z')))).updated).toBe(1);
    const versions = await w.query('SELECT valid_from, valid_to FROM contacts_history WHERE id = 9 ORDER BY valid_from');
    expect(versions).toEqual([
      { valid_from: new Date(before.updated_at!), valid_to: new Date('2026-04-01T00:00:00Z') },
      { valid_from: new Date('2026-04-01T00:00:00Z'), valid_to: null },
    ]);
  });

  it('tombstones deletes, and a contact that reappears is live again with a new version', async () => {
    const deletedAt = new Date('2026-05-01T00:00:00.000Z');
    const memberships = 'SELECT (SELECT count(*) FROM contact_tags WHERE contact_id IN (10, 11)) + (SELECT count(*) FROM contact_lists WHERE contact_id IN (10, 11)) AS n';
    const held = Number((await one(memberships)).n);
    expect(held).toBeGreaterThan(0);
    expect(await w.tombstoneContacts([10, 11, 10_000], { ...ctx(), deletedAt })).toBe(2);
    // Deleted contacts are members of nothing (issue 14 item 7); their row keeps its last tag_ids.
    expect(Number((await one(memberships)).n)).toBe(0);
    expect(Number((await one('SELECT len(tag_ids) + len(list_ids) AS n FROM contacts WHERE id IN (10, 11) ORDER BY id LIMIT 1')).n)).toBeGreaterThan(0);
    expect(await w.tombstoneContacts([10], ctx())).toBe(0);
    expect(await one('SELECT _deleted_at FROM contacts WHERE id = 10')).toEqual({ _deleted_at: deletedAt });
    expect(await one('SELECT count(*) AS n FROM contacts_current WHERE id IN (10, 11)')).toEqual({ n: 0 });
    expect(await one('SELECT count(*) AS n FROM contacts_history WHERE id = 10 AND valid_to IS NULL')).toEqual({ n: 0 });

    const back = await w.loadContacts([makeContact(10)], ctx(new Date('2026-06-01T00:00:00.000Z')));
    expect(back).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    const c10 = makeContact(10);
    expect(Number((await one('SELECT count(*) AS n FROM contact_tags WHERE contact_id = 10')).n)).toBe(c10.tags.length);
    expect(Number((await one('SELECT count(*) AS n FROM contact_lists WHERE contact_id = 10')).n)).toBe(c10.lists.length);
    expect(await one('SELECT _deleted_at FROM contacts WHERE id = 10')).toEqual({ _deleted_at: null });
    const versions = await w.query('SELECT valid_from, valid_to FROM contacts_history WHERE id = 10 ORDER BY valid_from');
    expect(versions).toHaveLength(2);
    expect(versions[1]).toEqual({ valid_from: new Date('2026-06-01T00:00:00.000Z'), valid_to: null });
  });

  it('reconciliation tombstones live contacts not seen, up to maxId only', async () => {
    const seen = Array.from({ length: N }, (_, i) => i + 1).filter((id) => id !== 20 && id !== 21 && id !== 450);
    expect(await w.tombstoneContactsNotIn(seen, 400, ctx())).toBe(2);
    expect(await w.query('SELECT id FROM contacts WHERE _deleted_at IS NOT NULL AND id IN (20, 21, 450) ORDER BY id')).toEqual([{ id: 20 }, { id: 21 }]);
    expect(await w.maxContactId()).toBe(N);
  });

  it('converts timestamps: ISO UTC kept, zone-less read in the site time zone, dates as DATE', async () => {
    const c = makeContact(N + 1, { created_at: '2026-01-15T12:34:56.000Z', updated_at: '2026-07-01 09:00:00', date_of_birth: '1990-02-28' });
    await w.loadContacts([c], ctx());
    const r = await one(`SELECT epoch_ms(created_at) AS c, epoch_ms(updated_at) AS u, CAST(date_of_birth AS VARCHAR) AS dob, typeof(created_at) AS t FROM contacts WHERE id = ${N + 1}`);
    expect(r.c).toBe(Date.parse('2026-01-15T12:34:56.000Z'));
    // America/New_York is UTC-4 in July
    expect(r.u).toBe(Date.parse('2026-07-01T13:00:00.000Z'));
    expect(r.dob).toBe('1990-02-28');
    expect(r.t).toBe('TIMESTAMP WITH TIME ZONE');
  });

  it('keeps the raw record and custom values as JSON, ids as BIGINT', async () => {
    const r = await one(`SELECT typeof(id) AS tid, typeof(raw) AS traw, raw->>'$.last_activity' IS NOT NULL AS has_volatile, custom_values->>'$.plan' AS plan FROM contacts WHERE id = 4`);
    expect(r).toEqual({ tid: 'BIGINT', traw: 'JSON', has_volatile: true, plan: 'pro' });
  });

  it('custom values in another key order are not a change', async () => {
    const c = makeContact(13);
    const reordered = makeContact(13, { custom_values: Object.fromEntries(Object.entries(c.custom_values).reverse()) });
    expect(Object.keys(reordered.custom_values)).not.toEqual(Object.keys(c.custom_values));
    expect(await w.loadContacts([reordered], ctx())).toEqual({ inserted: 0, updated: 0, unchanged: 1, deleted: 0 });
    const changed = makeContact(13, { custom_values: { ...c.custom_values, plan: 'enterprise' } });
    expect((await w.loadContacts([changed], ctx())).updated).toBe(1);
  });

  it('the last duplicate of an id within one batch wins', async () => {
    const stats = await w.loadContacts([makeContact(12, { city: 'First' }), makeContact(12, { city: 'Second' })], ctx());
    expect(stats).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0 });
    expect(await one('SELECT city FROM contacts WHERE id = 12')).toEqual({ city: 'Second' });
  });

  it('rejects invalid ids with an error that names the fix', async () => {
    await expect(w.loadContacts([makeContact(1, { id: 1.5 })], ctx())).rejects.toMatchObject({ code: 'WAREHOUSE_INPUT_INVALID' });
  });
});
