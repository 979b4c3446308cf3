import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/crm/types.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { CONTACT_COLUMNS } from '../../src/warehouse/contact-columns.js';
import { quoteIdent, quoteLiteral } from '../../src/warehouse/quote.js';
import { fingerprintExpr, timestampExpr } from '../../src/warehouse/sql-expr.js';
import { stageDocs, stagedDocsSql } from '../../src/warehouse/stage.js';
import { listRef, makeContact, tagRef } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

const TZ = 'America/New_York';
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;

beforeAll(async () => {
  ({ p, w } = await openTempWarehouse({ siteTimeZone: TZ }));
});
afterAll(() => closeTempWarehouse({ p, w }));

// Values that collide with the row encoding's separators and null marker, or are otherwise odd.
const SEPARATORS = ['\x1c', '\x1d', '\x1e', '\x1f'];
function oddContact(id: number): Contact {
  return makeContact(id, {
    first_name: `A${SEPARATORS.join('')}b`,
    last_name: '\x1d',
    full_name: '',
    address_line_1: 'line\nwith\ttabs and "quotes" \\ backslash',
    address_line_2: '\x1c{"not":"json"}',
    city: 'Zürich 東京 🚀',
    phone: null,
    total_points: Number.NaN,
    life_time_value: 0.1 + 0.2,
    tags: [tagRef(9), tagRef(3), tagRef(9)],
    lists: [],
    custom_values: { zeta: 'x\x1fy', alpha: { nested: [1, 2.5, null] }, mid: 1e21 },
    created_at: '2024-03-10 01:30:00',
    updated_at: '2026-11-21T04:55:36.123Z',
    date_of_birth: '0000-00-00',
  });
}

describe('contact row encoding', () => {
  it('lands separator characters, empty strings, NULLs and unicode exactly as given', async () => {
    const c = oddContact(900_001);
    c.raw = { ...c.raw, note: `raw ${SEPARATORS.join('|')}` };
    expect(await w.loadContacts([c], ctx())).toMatchObject({ inserted: 1 });
    const row = (
      await w.query(`SELECT first_name, last_name, full_name, address_line_1, address_line_2, city, phone, total_points,
      life_time_value, tag_ids, list_ids, custom_values, raw, date_of_birth, epoch_ms(created_at) AS created_ms, epoch_ms(updated_at) AS updated_ms FROM contacts WHERE id = 900001`)
    )[0]!;
    expect(row.first_name).toBe(c.first_name);
    expect(row.last_name).toBe(c.last_name);
    expect(row.full_name).toBe('');
    expect(row.address_line_1).toBe(c.address_line_1);
    expect(row.address_line_2).toBe(c.address_line_2);
    expect(row.city).toBe(c.city);
    expect(row.phone).toBeNull();
    expect(row.total_points).toBeNull();
    expect(row.life_time_value).toBe(c.life_time_value);
    expect((row.tag_ids as unknown[]).map(Number)).toEqual([3, 9]);
    expect(row.list_ids).toEqual([]);
    expect(JSON.parse(String(row.custom_values))).toEqual(c.custom_values);
    expect(Object.keys(JSON.parse(String(row.custom_values)))).toEqual(['alpha', 'mid', 'zeta']);
    expect(JSON.parse(String(row.raw))).toEqual(JSON.parse(JSON.stringify(c.raw)));
    expect(row.date_of_birth).toBeNull();
    // zone-less: read in the site time zone (EST in March before the DST switch)
    expect(Number(row.created_ms)).toBe(Date.parse('2024-03-10T06:30:00.000Z'));
    expect(Number(row.updated_ms)).toBe(Date.parse(c.updated_at!));
  });

  it('fingerprints exactly as the former JSON-document staging did, so existing rows do not all look changed', async () => {
    const contacts = [oddContact(900_101), ...Array.from({ length: 30 }, (_, i) => makeContact(900_200 + i)), makeContact(900_300, { tags: [], lists: [listRef(2), listRef(1)] })];
    await w.loadContacts(contacts, ctx());
    // The former pipeline: whole contact as JSON (custom_values keys sorted), typed by json_transform.
    const spec = JSON.stringify({
      ...Object.fromEntries(CONTACT_COLUMNS.filter(([n]) => n !== 'tag_ids' && n !== 'list_ids').map(([n, t]) => [n, t === 'TIMESTAMPTZ' || t === 'DATE' ? 'VARCHAR' : t])),
      tags: [{ id: 'BIGINT' }],
      lists: [{ id: 'BIGINT' }],
    });
    const typed = CONTACT_COLUMNS.map(([n, t]) => {
      const src = `j.${quoteIdent(n)}`;
      if (n === 'tag_ids') return `list_sort(list_distinct(list_transform(j.tags, x -> x.id))) AS tag_ids`;
      if (n === 'list_ids') return `list_sort(list_distinct(list_transform(j.lists, x -> x.id))) AS list_ids`;
      if (t === 'TIMESTAMPTZ') return `${timestampExpr(src, TZ)} AS ${quoteIdent(n)}`;
      if (t === 'DATE') return `TRY_CAST(${src} AS DATE) AS ${quoteIdent(n)}`;
      if (n === 'custom_values') return `coalesce(${src}, '{}') AS custom_values`;
      return `${src} AS ${quoteIdent(n)}`;
    });
    const sorted = (c: Contact) => ({ ...c, custom_values: Object.fromEntries(Object.entries(c.custom_values).sort(([a], [b]) => (a < b ? -1 : 1))) });
    await stageDocs(
      w.connection,
      '_test_old_docs',
      contacts.map((c) => JSON.stringify(sorted(c))),
    );
    const old = await w.query(`SELECT id, ${fingerprintExpr(CONTACT_COLUMNS)} AS fp FROM (
      SELECT ${typed.join(', ')} FROM (SELECT json_transform(doc, ${quoteLiteral(spec)}) AS j FROM ${stagedDocsSql('_test_old_docs')})) ORDER BY id`);
    const now = await w.query(`SELECT id, _fingerprint AS fp FROM contacts WHERE id IN (${contacts.map((c) => c.id).join(',')}) ORDER BY id`);
    expect(now).toHaveLength(contacts.length);
    expect(now).toEqual(old);
  });

  it('a reload that changes only raw is unchanged, and raw is not rewritten', async () => {
    const c = makeContact(900_400);
    await w.loadContacts([c], ctx());
    const again = { ...c, raw: { ...c.raw, last_activity: 'later' } };
    expect(await w.loadContacts([again], ctx())).toEqual({ inserted: 0, updated: 0, unchanged: 1, deleted: 0 });
    const row = (await w.query('SELECT raw FROM contacts WHERE id = 900400'))[0]!;
    expect(JSON.parse(String(row.raw))).toEqual(c.raw);
  });

  it('new contacts below the highest id held (raw staged apart) land with their raw record and memberships', async () => {
    const high = makeContact(950_000);
    await w.loadContacts([high], ctx());
    const low = [oddContact(940_001), makeContact(940_002)];
    const mixed = [...low, { ...high, email: 'changed@example.com' }];
    expect(await w.loadContacts(mixed, ctx())).toEqual({ inserted: 2, updated: 1, unchanged: 0, deleted: 0 });
    const rows = await w.query('SELECT id, raw, email FROM contacts WHERE id IN (940001, 940002, 950000) ORDER BY id');
    expect(rows.map((r) => JSON.parse(String(r.raw)))).toEqual(mixed.map((c) => JSON.parse(JSON.stringify(c.raw))));
    expect(rows[2]!.email).toBe('changed@example.com');
    const tags = await w.query('SELECT contact_id, list(tag_id ORDER BY tag_id) AS t FROM contact_tags WHERE contact_id IN (940001, 940002) GROUP BY ALL ORDER BY 1');
    expect(tags.map((r) => (r.t as unknown[]).map(Number))).toEqual(low.map((c) => [...new Set(c.tags.map((t) => t.id))].sort((a, b) => a - b)));
  });
});
