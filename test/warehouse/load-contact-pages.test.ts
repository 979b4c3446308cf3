import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePage } from '../../src/crm/parse.js';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import { contactSchema } from '../../src/crm/schemas/contact.js';
import { createTimestampNormalizer } from '../../src/crm/timestamps.js';
import type { Contact } from '../../src/crm/types.js';
import { CONTACT_BUCKET_SIZE } from '../../src/warehouse/contact-columns.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import type { ContactPage, ContactPagesStats } from '../../src/warehouse/load-contact-pages.js';
import type { LoadContext } from '../../src/warehouse/types.js';
import { sharedFixtureDir } from '../helpers/shared-fixtures.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';
import { contactTablesSnapshot } from '../helpers/contact-tables.js';

// Compared with the client's path (parse in JS, then loadContacts) in a warehouse of its own.
const ZONE = 'America/New_York';
let js: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };
let sql: { p: ReturnType<typeof tempPaths>; w: WarehouseHandle };

/**
 * Pages go to the SQL warehouse as given, or as the sync hands them over: with the row spans
 * the fetch's scan found (none for a body it cannot scan or another envelope), loaded at once or
 * typed aside on the handle's typing lane first, then loaded (as the contact sink does while the
 * writer is busy).
 */
let handOver: 'bodies' | 'spans' | 'aside' = 'bodies';
let spanned = 0;
async function loadPages(pages: ContactPage[], c: LoadContext): Promise<ContactPagesStats> {
  if (handOver === 'bodies') return sql.w.loadContactPages(pages, c);
  const withSpans = pages.map((p) => {
    let spans: readonly number[] | undefined;
    try {
      spans = scanContactPage(p.body, { page: p.page, perPage: 15 }, 'GET /subscribers').rowSpans;
    } catch {
      spans = undefined;
    }
    if (spans) spanned++;
    return spans ? { ...p, rowSpans: spans } : p;
  });
  if (handOver === 'spans') return sql.w.loadContactPages(withSpans, c);
  return sql.w.loadTypedContactPages(await sql.w.typeContactPagesAside(withSpans), c);
}

const schema = contactSchema(createTimestampNormalizer(ZONE));
const parsed = (body: unknown): Contact[] => parsePage(body, ['subscribers'], schema, { page: 1, perPage: 15 }, 'GET /subscribers').items as Contact[];
const listing = (data: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ subscribers: { total: 1, per_page: 15, current_page: 1, data }, ...extra });

/** Every 200 listing of /subscribers captured from the real deployments (both sites, site-ny's custom fields too), as page bodies. */
function capturedListings(): { name: string; body: unknown }[] {
  const root = sharedFixtureDir();
  return [root, join(root, 'site-ny')].flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => /^GET_subscribers(\.json|_(per_page|page|sort|order|statuses|tags|lists|company|custom_fields|no_custom_fields|search_lovelace).*\.json)$/.test(f))
      .map((f) => ({ name: join(dir === root ? '' : 'site-ny', f), fixture: JSON.parse(readFileSync(join(dir, f), 'utf8')) as { status: number; body: unknown } }))
      .filter((x) => x.fixture.status === 200 && (x.fixture.body as { subscribers?: { data?: unknown[] } }).subscribers?.data?.length)
      .map((x) => ({ name: x.name, body: x.fixture.body })),
  );
}

describe.each([
  ['as bodies', 'bodies'],
  ['with the row spans of the scan', 'spans'],
  ['typed aside, then loaded', 'aside'],
] as const)('loadContactPages (%s)', (_, mode) => {
  beforeAll(async () => {
    handOver = mode;
    spanned = 0;
    js = await openTempWarehouse({ siteTimeZone: ZONE });
    sql = await openTempWarehouse({ siteTimeZone: ZONE });
  });
  afterAll(async () => {
    await closeTempWarehouse(js);
    await closeTempWarehouse(sql);
  });

  it('loads every captured real listing exactly as the client path does', async () => {
    const listings = capturedListings();
    expect(listings.length).toBeGreaterThanOrEqual(10);
    expect(listings.filter((l) => l.name.startsWith('site-ny')).map((l) => l.name)).toContain(join('site-ny', 'GET_subscribers_custom_fields_true.json'));
    for (const [i, { body }] of listings.entries()) {
      const at = new Date(Date.UTC(2026, 10, 22, 0, i));
      const a = await js.w.loadContacts(parsed(body), { loadId: `l${i}`, syncedAt: at });
      const b = await loadPages([{ page: i + 1, body: JSON.stringify(body) }], { loadId: `l${i}`, syncedAt: at });
      expect(b, listings[i]!.name).toEqual({ ...a, rejected: 0 });
    }
    expect(spanned).toBe(mode === 'bodies' ? 0 : listings.length);
    expect(await contactTablesSnapshot(sql.w)).toEqual(await contactTablesSnapshot(js.w));
  });

  it('reads ids and counts as numbers or numeric strings, {} as [], and both timestamp shapes', async () => {
    const rows = [
      {
        id: '900001',
        user_id: '7',
        email: 'a@x.test',
        status: 'subscribed',
        total_points: '12',
        life_time_value: '3.50',
        company_id: '',
        tags: {},
        lists: [{ id: '4' }, { id: 2 }],
        custom_values: [],
        created_at: '2026-03-08 01:30:00',
        updated_at: '2026-07-01T12:00:00+02:00',
      },
      {
        id: 900002,
        user_id: 8,
        email: 'b@x.test',
        status: 'pending',
        total_points: 5,
        life_time_value: 1.25,
        company_id: null,
        tags: [3, '1'],
        lists: { 0: { id: 6 } },
        custom_values: { b: 1, a: 'x' },
        created_at: '2026-11-01 01:30:00',
        updated_at: '2026-07-01T10:00:00Z',
      },
    ];
    await js.w.loadContacts(parsed(JSON.parse(listing(rows))), ctx(new Date('2026-11-22T00:00:00Z')));
    const stats = await loadPages([{ page: 1, body: listing(rows) }], ctx(new Date('2026-11-22T00:00:00Z')));
    expect(stats).toMatchObject({ inserted: 2, rejected: 0 });
    const q =
      'SELECT id, user_id, company_id, total_points, life_time_value, tag_ids, list_ids, CAST(custom_values AS VARCHAR) AS cv, created_at, updated_at FROM contacts WHERE id > 900000 ORDER BY id';
    const got = await sql.w.query(q);
    expect(got).toEqual([
      // created_at is zone-less: New York time (EST before the 2026-03-08 02:00 switch)
      {
        id: 900001,
        user_id: 7,
        company_id: null,
        total_points: 12,
        life_time_value: 3.5,
        tag_ids: [],
        list_ids: [2, 4],
        cv: '{}',
        created_at: new Date('2026-03-08T06:30:00Z'),
        updated_at: new Date('2026-07-01T10:00:00Z'),
      },
      {
        id: 900002,
        user_id: 8,
        company_id: null,
        total_points: 5,
        life_time_value: 1.25,
        tag_ids: [1, 3],
        list_ids: [6],
        cv: '{"a":"x","b":1}',
        created_at: new Date('2026-11-01T05:30:00Z'),
        updated_at: new Date('2026-07-01T10:00:00Z'),
      },
    ]);
    expect(got).toEqual(await js.w.query(q));
  });

  it('types ids, lists, custom values and wall times around the zone’s changes as the client path does', async () => {
    const walls = [
      '2026-11-01 00:59:59',
      '2026-11-01 01:00:00',
      '2026-11-01 01:30:00',
      '2026-11-01 01:59:59',
      '2026-11-01 02:00:00',
      '2026-03-08 01:59:59',
      '2026-03-08 02:30:00',
      '2026-03-08 03:00:00',
      '1883-11-18 12:03:57',
      '1883-11-18 12:03:58',
      '2026-07-01 12:00:00.5',
    ];
    const refs: unknown[] = [
      [],
      [{ id: '5' }],
      [{ id: 5 }, { id: 5 }],
      [{ id: '2' }, { id: '1' }],
      [{ id: '007' }, { id: 3 }],
      [{ id: 1 }, { id: 9 }, { id: 4 }],
      [{ id: -3 }, { id: '-1' }],
      { 0: { id: 8 } },
    ];
    const customs: unknown[] = [{ b: 1, a: 2 }, {}, [], ['x', { z: 1 }], { a: { z: 1, y: 2.5 }, c: 'é\u0000"' }, { a: 1.0, b: [] }];
    const rows = walls.map((wall, k) => ({
      id: 970001 + k,
      email: `w${k}@x.test`,
      status: 'subscribed',
      user_id: k % 2 ? String(k) : k,
      total_points: k % 3 ? `${k}.50` : k,
      tags: refs[k % refs.length],
      lists: refs[(k + 3) % refs.length],
      custom_values: customs[k % customs.length],
      created_at: wall,
      updated_at: walls[walls.length - 1 - k],
    }));
    const at = new Date('2026-11-22T02:00:00Z');
    await js.w.loadContacts(parsed(JSON.parse(listing(rows))), { loadId: 'edges', syncedAt: at });
    expect(await loadPages([{ page: 1, body: listing(rows) }], { loadId: 'edges', syncedAt: at })).toMatchObject({ inserted: rows.length, rejected: 0 });
    const q = `SELECT id, user_id, total_points, tag_ids, list_ids, CAST(custom_values AS VARCHAR) AS cv, created_at, updated_at, _fingerprint FROM contacts WHERE id BETWEEN 970000 AND 979999 ORDER BY id`;
    const got = await sql.w.query(q);
    expect(got).toHaveLength(rows.length);
    expect(got).toEqual(await js.w.query(q));
  });

  it('records a row that does not fit in _contact_rejects with its reason, and loads the others', async () => {
    const rows = [
      { id: 910001, email: 'ok1@x.test', status: 'subscribed', tags: [], lists: [] },
      { id: 910002, email: 'bad@x.test', status: 'subscribed', total_points: 'lots', user_id: 1.5, tags: [], lists: [] },
      { id: 'abc', email: 'noid@x.test', status: 'subscribed' },
      { id: 910003, email: { nested: true }, status: 'subscribed', tags: [{ id: 'x' }] },
      { id: 910004, email: 'ok2@x.test', status: 'subscribed', tags: [1], lists: [] },
    ];
    const stats = await loadPages([{ page: 7, body: listing(rows) }], { loadId: 'rejects-1', syncedAt: new Date() });
    expect(stats).toMatchObject({ inserted: 2, rejected: 3 });
    expect(await sql.w.query('SELECT id FROM contacts WHERE id BETWEEN 910000 AND 919999 ORDER BY id')).toEqual([{ id: 910001 }, { id: 910004 }]);
    const rejects = await sql.w.query(`SELECT page, position, contact_id, reason FROM _contact_rejects WHERE _load_id = 'rejects-1' ORDER BY position`);
    expect(rejects).toEqual([
      { page: 7, position: 2, contact_id: '910002', reason: expect.stringMatching(/^user_id: expected an integer.*got 1\.5; total_points: expected a number.*got "lots"$/) },
      { page: 7, position: 3, contact_id: 'abc', reason: 'id: expected an integer or numeric string, got "abc"' },
      { page: 7, position: 4, contact_id: '910003', reason: expect.stringMatching(/^email: expected a string.*\{"nested":true\}; tags: expected objects with an integer id/) },
    ]);
  });

  it('names every field of a row that does not fit, alone or together, and passes values that only look odd', async () => {
    const issues: Record<string, unknown> = {
      email: ['e@x.test'],
      first_name: { a: 1 },
      city: [],
      date_of_birth: {},
      user_id: 'seven',
      company_id: '99999999999999999999',
      total_points: '1e3',
      life_time_value: { v: 1 },
      tags: 'x',
      lists: [{ id: '1.5' }],
    };
    const row = (id: number | string, fields: Record<string, unknown> = {}) => ({ id, email: `r${id}@x.test`, status: 'subscribed', tags: [], lists: [], ...fields });
    // One row per field with only that issue, one with all of them, one with an id that is no integer.
    const alone = Object.entries(issues).map(([k, v], i) => row(915101 + i, { [k]: v }));
    // Text that starts like JSON, a boolean, a padded or zero-led id, bare ids: all fit.
    const odd = row('0915002', { first_name: '{not json', city: '[x]', user_id: true, company_id: ' 12 ', total_points: ' 2.5 ', life_time_value: 7, tags: [4, '3'], lists: { 0: 2 } });
    const stats = await loadPages([{ page: 8, body: listing([...alone, row(915001, issues), odd, row('1.0')]) }], { loadId: 'reasons-1', syncedAt: new Date() });
    expect(stats).toMatchObject({ inserted: 1, rejected: alone.length + 2 });
    const rejects = (await sql.w.query(`SELECT contact_id, reason FROM _contact_rejects WHERE _load_id = 'reasons-1' ORDER BY position`)) as { contact_id: string; reason: string }[];
    const fieldsOf = (reason: string) => reason.split('; ').map((r) => r.split(':')[0]);
    expect(rejects.slice(0, alone.length).map((r) => fieldsOf(r.reason))).toEqual(Object.keys(issues).map((k) => [k]));
    expect(fieldsOf(rejects[alone.length]!.reason)).toEqual(['user_id', 'email', 'first_name', 'city', 'date_of_birth', 'company_id', 'total_points', 'life_time_value', 'tags', 'lists']);
    expect(rejects[alone.length + 1]).toEqual({ contact_id: '1.0', reason: 'id: expected an integer or numeric string, got "1.0"' });
    expect(await sql.w.query('SELECT id, first_name, city, user_id, company_id, total_points, tag_ids, list_ids FROM contacts WHERE id = 915002')).toEqual([
      { id: 915002, first_name: '{not json', city: '[x]', user_id: 1, company_id: 12, total_points: 2.5, tag_ids: [3, 4], list_ids: [2] },
    ]);
  });

  it('a later page wins over an earlier one for the same id, and a reload merges', async () => {
    const v1 = { id: 920001, email: 'v1@x.test', status: 'subscribed', first_name: 'One', updated_at: '2026-01-01 00:00:00' };
    const v2 = { ...v1, first_name: 'Two', updated_at: '2026-02-01 00:00:00' };
    const first = await loadPages(
      [
        { page: 1, body: listing([v1]) },
        { page: 2, body: listing([v2]) },
      ],
      ctx(),
    );
    expect(first).toMatchObject({ inserted: 1, rejected: 0 });
    expect(await sql.w.query('SELECT first_name FROM contacts WHERE id = 920001')).toEqual([{ first_name: 'Two' }]);
    const v3 = { ...v1, first_name: 'Three', updated_at: '2026-03-01 00:00:00' };
    const again = await loadPages([{ page: 1, body: listing([v2, v3]) }], ctx());
    expect(again).toMatchObject({ inserted: 0, updated: 1, unchanged: 0, rejected: 0 });
    expect(await sql.w.query('SELECT first_name, valid_to IS NULL AS open FROM contacts_history WHERE id = 920001 ORDER BY valid_from')).toEqual([
      { first_name: 'Two', open: false },
      { first_name: 'Three', open: true },
    ]);
  });

  it('loads only the rows a page asks for: ids above minId, the first firstRows rows', async () => {
    const row = (id: number | string, email = `f${id}@x.test`) => ({ id, email, status: 'subscribed', tags: [], lists: [] });
    const stats = await loadPages(
      [
        // Held ids (at or below 940002) are left out; an unreadable id is kept, and rejected.
        { page: 1, body: listing([row(940004), row(940003), row(940002), row('zz'), row(940001, 'not-asked@x.test')]), minId: 940002 },
        // Only the first two rows; the third would be a reject, and is not asked for.
        { page: 2, body: listing([row(940012), row(940011), { id: 940010, email: { no: 1 } }]), firstRows: 2 },
        { page: 3, body: listing([row(940021)]) },
      ],
      { loadId: 'filters-1', syncedAt: new Date() },
    );
    expect(stats).toMatchObject({ inserted: 5, rejected: 1 });
    expect(await sql.w.query('SELECT id FROM contacts WHERE id BETWEEN 940000 AND 949999 ORDER BY id')).toEqual([{ id: 940003 }, { id: 940004 }, { id: 940011 }, { id: 940012 }, { id: 940021 }]);
    expect(await sql.w.query(`SELECT page, position, contact_id FROM _contact_rejects WHERE _load_id = 'filters-1'`)).toEqual([{ page: 1, position: 4, contact_id: 'zz' }]);
    await expect(loadPages([{ page: 1, body: listing([]), minId: 1.5 }], ctx())).rejects.toThrow(/minId 1.5 of contact page 1 is not an integer/);
  });

  it('rejects a listed row that is null or not an object, with its record', async () => {
    const ok = { id: 950001, email: 'n1@x.test', status: 'subscribed', tags: [], lists: [] };
    const stats = await loadPages([{ page: 9, body: listing([ok, null, 7]) }], { loadId: 'nulls-1', syncedAt: new Date() });
    expect(stats).toMatchObject({ inserted: 1, rejected: 2 });
    const rejects = await sql.w.query(`SELECT position, CAST(raw AS VARCHAR) AS raw, reason FROM _contact_rejects WHERE _load_id = 'nulls-1' ORDER BY position`);
    expect(rejects).toEqual([
      { position: 2, raw: 'null', reason: expect.stringContaining('id: expected an integer or numeric string, got nothing') as unknown },
      { position: 3, raw: '7', reason: expect.stringContaining('id: expected an integer or numeric string, got nothing') as unknown },
    ]);
  });

  it('loads new contacts below the highest id held (ranges landing out of order) as the client path does', async () => {
    const row = (id: number) => ({
      id,
      email: `o${id}@x.test`,
      status: 'subscribed',
      first_name: `O${id}`,
      tags: [{ id: 1 + (id % 3) }],
      lists: [{ id: 2 }],
      created_at: '2026-03-01 10:00:00',
      updated_at: '2026-03-02 11:00:00',
    });
    const high = listing([row(960011), row(960012)]);
    const low = listing([row(960001), row(960002), row(960003)]);
    const at = new Date('2026-11-22T01:00:00Z');
    for (const [i, body] of [high, low].entries()) {
      const a = await js.w.loadContacts(parsed(JSON.parse(body)), { loadId: `o${i}`, syncedAt: at });
      const b = await loadPages([{ page: 1, body }], { loadId: `o${i}`, syncedAt: at });
      expect(b).toEqual({ ...a, rejected: 0 });
    }
    for (const q of [
      'SELECT * EXCLUDE (raw), CAST(json(raw) AS VARCHAR) AS raw FROM contacts WHERE id BETWEEN 960000 AND 960099 ORDER BY id',
      'SELECT * FROM contacts_history WHERE id BETWEEN 960000 AND 960099 ORDER BY id',
      'SELECT * FROM contact_tags WHERE contact_id BETWEEN 960000 AND 960099 ORDER BY ALL',
      'SELECT * FROM contact_lists WHERE contact_id BETWEEN 960000 AND 960099 ORDER BY ALL',
      `SELECT * FROM _lake_dirty WHERE part = '${Math.floor(960001 / CONTACT_BUCKET_SIZE)}' ORDER BY ALL`,
    ]) {
      const got = await sql.w.query(q);
      expect(got.length, q).toBeGreaterThan(0);
      expect(got, q).toEqual(await js.w.query(q));
    }
  });

  it('marks the lake bucket of new ids loaded below the highest held, in a bucket of their own', async () => {
    // Ranges of a backfill land out of order: a load of new ids below those held takes the merge's
    // all-new path, which must mark its own bucket, not the one of the ids held.
    const [lowBucket, highBucket] = [40, 41];
    const row = (id: number) => ({ id, email: `b${id}@x.test`, status: 'subscribed', created_at: '2026-03-01 10:00:00' });
    const high = listing([row(highBucket * CONTACT_BUCKET_SIZE + 1)]);
    const low = listing([row(lowBucket * CONTACT_BUCKET_SIZE + 1), row(lowBucket * CONTACT_BUCKET_SIZE + 2)]);
    const at = new Date('2026-11-22T02:00:00Z');
    for (const [i, body] of [high, low].entries()) {
      await js.w.loadContacts(parsed(JSON.parse(body)), { loadId: `b${i}`, syncedAt: at });
      expect(await loadPages([{ page: 1, body }], { loadId: `b${i}`, syncedAt: at })).toMatchObject({ inserted: i === 0 ? 1 : 2 });
    }
    const q = `SELECT * FROM _lake_dirty WHERE part IN ('${lowBucket}', '${highBucket}') ORDER BY ALL`;
    const marked = (await sql.w.query(q)) as { part: string }[];
    expect(marked.filter((m) => m.part === String(lowBucket))).toHaveLength(4);
    expect(marked).toEqual(await js.w.query(q));
  });

  it('refuses a body that is not JSON, naming the fix', async () => {
    const refused = loadPages([{ page: 3, body: '<html>secret-looking error</html>' }], ctx());
    await expect(refused).rejects.toThrow(/pages 3-3 is not readable JSON.*fetch those pages again/);
    await expect(refused).rejects.not.toThrow(/secret-looking/);
    // Retryable, as the client's invalid_json is: the fetching activity runs again and refetches.
    await expect(refused).rejects.toMatchObject({ code: 'WAREHOUSE_PAGE_UNREADABLE', retryable: true });
  });

  it('refuses, retryably, a page whose structure scans but whose string escape DuckDB refuses', async () => {
    const body = JSON.stringify({ total: 1, per_page: 1, current_page: 1, last_page: 1, data: [{ id: 930001, email: 'a@example.com' }] }).replace('a@example', '\\q@example'); // "\q": no such escape
    expect(() => JSON.parse(body) as unknown).toThrow();
    const refused = loadPages([{ page: 4, body }], ctx());
    await expect(refused).rejects.toMatchObject({ code: 'WAREHOUSE_PAGE_UNREADABLE', retryable: true });
    // The same in the listing's envelope, which the scan takes rows from, and a raw control
    // character inside a string (JSON allows it only escaped; the separator of the rows is one).
    for (const bad of ['\\q@example', '\u001e@example', '\u0001@example']) {
      const listed = listing([
        { id: 930002, email: 'b@example.com' },
        { id: 930003, email: 'a@example.com' },
      ]).replace('a@example', bad);
      const before = spanned;
      await expect(loadPages([{ page: 5, body: listed }], ctx())).rejects.toMatchObject({ code: 'WAREHOUSE_PAGE_UNREADABLE', retryable: true });
      expect(spanned - before).toBe(mode === 'bodies' ? 0 : 1);
    }
    expect(await sql.w.query('SELECT id FROM contacts WHERE id IN (930002, 930003)')).toEqual([]);
  });

  it('refuses row spans that do not fit the body, naming the fix', async () => {
    const body = listing([{ id: 931001, email: 'c@example.com' }]);
    for (const rowSpans of [[1], [0, body.length + 1], [5, 6], [10, 20, 5, 30]]) {
      await expect(sql.w.loadContactPages([{ page: 6, body, rowSpans }], ctx())).rejects.toThrow(/row spans of contact page 6 do not fit its body; pass the rowSpans the scan/);
    }
  });
});
