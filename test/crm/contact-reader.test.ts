import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { BadResponseError } from '../../src/crm/index.js';
import { parsePage, parseRecord } from '../../src/crm/parse.js';
import { taxonomyRef } from '../../src/crm/schemas/contact.js';
import { buildSchemas } from '../../src/crm/schemas/index.js';
import { arrayOf } from '../../src/crm/schemas/primitives.js';
import { createTimestampNormalizer } from '../../src/crm/timestamps.js';
import { startSimulator } from '../../src/simulator/index.js';
import { loadFixtures } from './helpers/fixtures.js';

/**
 * Pages of contacts are read by the schema's own reader (`parsePage`: no zod pass per row, no closure
 * per field); single records go through zod (`parseRecord`). Both must give the same contacts and,
 * for a bad row, the same issues (with the row index in front on a page).
 */
const ZONES = ['UTC', 'Europe/Berlin'];
const q = { page: 1, perPage: 100 };
const ROUTE = 'GET /subscribers';

function viaPage(rows: unknown[], zone: string) {
  const schemas = buildSchemas(createTimestampNormalizer(zone));
  return parsePage({ subscribers: { total: rows.length, per_page: 100, current_page: 1, last_page: 1, data: rows } }, ['subscribers'], schemas.Contact, q, ROUTE).items;
}

function viaZod(rows: unknown[], zone: string) {
  const schemas = buildSchemas(createTimestampNormalizer(zone));
  return rows.map((row) => parseRecord(schemas.Contact, row, ROUTE));
}

/** The general reader of tags and lists, which the contact reader inlines for the usual shape. */
const refs = arrayOf(taxonomyRef);
const noIssue = (m: string) => {
  throw new Error(m);
};

function expectSame(rows: unknown[]) {
  for (const zone of ZONES) {
    const page = viaPage(rows, zone);
    expect(page).toEqual(viaZod(rows, zone));
    page.forEach((c, i) => {
      expect(c.raw).toBe(rows[i]); // the record as sent, not a copy
      const row = rows[i] as { tags?: unknown; lists?: unknown };
      expect(c.tags).toEqual(refs(row.tags, noIssue));
      expect(c.lists).toEqual(refs(row.lists, noIssue));
    });
  }
}

/** Contact rows in the captured real responses: listings, single records, write results. */
function fixtureRows(): unknown[] {
  const rows: unknown[] = [];
  for (const f of loadFixtures()) {
    if (f.status < 200 || f.status >= 300 || !f.body_is_json || !f.body || typeof f.body !== 'object') continue;
    const b = f.body as Record<string, unknown>;
    const listing = (b.subscribers as { data?: unknown } | undefined)?.data;
    if (Array.isArray(listing)) rows.push(...listing);
    else if (listing && typeof listing === 'object') rows.push(...Object.values(listing));
    for (const k of ['subscriber', 'contact']) if (b[k] && typeof b[k] === 'object' && 'email' in (b[k] as object)) rows.push(b[k]);
  }
  return rows;
}

const base = {
  id: 7,
  user_id: null,
  hash: 'h',
  email: 'a@example.test',
  first_name: 'Ada',
  last_name: 'Lovelace',
  full_name: 'Ada Lovelace',
  status: 'subscribed',
  contact_type: 'lead',
  phone: null,
  address_line_1: null,
  address_line_2: null,
  city: 'Berlin',
  state: null,
  postal_code: null,
  country: 'DE',
  date_of_birth: null,
  photo: null,
  company_id: null,
  total_points: 0,
  life_time_value: 0,
  tags: [],
  lists: [],
  created_at: '2026-11-21 04:55:36',
  updated_at: '2026-11-21T04:55:58+00:00',
};

describe('contact rows: page reader and zod agree', () => {
  it('on every captured real contact', () => {
    const rows = fixtureRows();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeGreaterThan(20);
    expectSame(rows);
  });

  it('on simulator pages', async () => {
    const sim = await startSimulator({ contacts: 250, seed: 9 });
    try {
      const auth = `Basic ${Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64')}`;
      for (const page of [1, 2, 3]) {
        const res = await request(`${sim.baseUrl}/subscribers?page=${page}&per_page=100&custom_fields=true`, { headers: { authorization: auth } });
        const body = (await res.body.json()) as { subscribers: { data: unknown[] } };
        expect(body.subscribers.data.length).toBeGreaterThan(0);
        expectSame(body.subscribers.data);
      }
    } finally {
      await sim.close();
    }
  });

  it('on the tolerated shapes, with the normalized values pinned', () => {
    const rows = [
      // ids and counts as numeric strings, [] for an object, zone-less and zoned timestamps, extra keys
      {
        ...base,
        id: '12',
        user_id: '3',
        company_id: ' 4 ',
        total_points: '15',
        life_time_value: '12.50',
        custom_values: [],
        extra_key: { nested: true },
        tags: [{ id: '2', title: 'VIP', slug: 'vip', pivot: { subscriber_id: '12' } }],
        lists: { 0: { id: 1, title: 'Customers', slug: 'customers' }, 1: { id: 2, title: 'Prospects', slug: 'prospects' } },
      },
      // missing optional keys, nulls, numbers where text is expected, bare ids for tags, custom_fields
      { id: 8, email: 'b@example.test', status: 'pending', phone: 5550100, postal_code: 10115, tags: [3, '4'], lists: null, custom_fields: { color: 'red' }, created_at: null },
      // a PHP list where a map was meant, a zero date, a date of birth with a time, numbers as floats
      { ...base, id: 9, custom_values: ['a', 'b'], created_at: '0000-00-00 00:00:00', date_of_birth: '1990-05-17 00:00:00', total_points: 3, life_time_value: 19.99 },
      // a day past the 28th (general timestamp path) and a fraction
      { ...base, id: 10, created_at: '2026-01-31 23:59:59', updated_at: '2026-03-29 02:30:00.250', date_of_birth: '0000-00-00' },
    ];
    expectSame(rows);
    const [a, b, c, d] = viaPage(rows, 'UTC');
    expect(a).toMatchObject({
      id: 12,
      user_id: 3,
      company_id: 4,
      total_points: 15,
      life_time_value: 12.5,
      custom_values: {},
      created_at: '2026-11-21T04:55:36.000Z',
      updated_at: '2026-11-21T04:55:58.000Z',
      tags: [{ id: 2, title: 'VIP', slug: 'vip' }],
      lists: [
        { id: 1, title: 'Customers', slug: 'customers' },
        { id: 2, title: 'Prospects', slug: 'prospects' },
      ],
    });
    expect(a!.raw.extra_key).toEqual({ nested: true });
    expect(Object.keys(a!)).not.toContain('extra_key');
    expect(b).toMatchObject({
      id: 8,
      user_id: null,
      first_name: null,
      status: 'pending',
      phone: '5550100',
      postal_code: '10115',
      total_points: null,
      tags: [
        { id: 3, title: '', slug: '' },
        { id: 4, title: '', slug: '' },
      ],
      lists: [],
      custom_values: { color: 'red' },
      created_at: null,
      updated_at: null,
    });
    expect(c).toMatchObject({ custom_values: { 0: 'a', 1: 'b' }, created_at: null, date_of_birth: '1990-05-17', total_points: 3, life_time_value: 19.99 });
    expect(d).toMatchObject({ created_at: '2026-01-31T23:59:59.000Z', updated_at: '2026-03-29T02:30:00.250Z', date_of_birth: null });
    const [, , , berlin] = viaPage(rows, 'Europe/Berlin');
    expect(berlin).toMatchObject({ created_at: '2026-01-31T22:59:59.000Z', updated_at: '2026-03-29T01:30:00.250Z' });
    expect(viaPage(rows, 'Europe/Berlin')[0]).toMatchObject({ created_at: '2026-11-21T03:55:36.000Z', updated_at: '2026-11-21T04:55:58.000Z' });
  });

  it.each([
    ['a non-numeric id', { id: 'seven' }, ['id']],
    ['an object as email', { email: { a: 1 } }, ['email']],
    [
      'a bad id in the second tag',
      {
        tags: [
          { id: 1, title: 'a', slug: 'a' },
          { id: 'x', title: 'b', slug: 'b' },
        ],
      },
      ['tags', 1, 'id'],
    ],
    ['a bad bare list id', { lists: [1, 'two'] }, ['lists', 1]],
    ['tags as a string', { tags: 'vip' }, ['tags']],
    ['several bad fields', { id: 'x', company_id: 'acme', total_points: 'lots', phone: { n: 1 } }, ['id']],
  ])('a bad row (%s) fails with the issues zod reports, under data.<row>', (_name, patch, firstPath) => {
    const good = { ...base, id: 1 };
    const bad = { ...base, ...patch };
    const schemas = buildSchemas(createTimestampNormalizer('UTC'));
    const zod = schemas.Contact.safeParse(bad);
    expect(zod.success).toBe(false);
    const issues = zod.error!.issues.slice(0, 3).map((i) => `data.1.${i.path.join('.')}: ${i.message}`);
    expect(zod.error!.issues[0]!.path).toEqual(firstPath);
    let err: unknown;
    try {
      viaPage([good, bad], 'UTC');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadResponseError);
    expect((err as BadResponseError).kind).toBe('schema');
    expect((err as Error).message).toContain(`(${issues.join('; ')})`);
    // The single-record path names the same fields (without the row index).
    expect(() => parseRecord(schemas.Contact, bad, ROUTE)).toThrow(issues[0]!.replace('data.1.', ''));
  });

  it('nested readers place issues under the key and index that raised them', () => {
    const schemas = buildSchemas(createTimestampNormalizer('UTC'));
    const bad = schemas.CampaignStatus.safeParse({
      campaign: { id: 1 },
      stat: [
        { status: 'sent', total: 3 },
        { status: 'open', total: 'many' },
      ],
    });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.path)).toEqual([['stat', 1, 'total']]);
    const tag = schemas.Tag.safeParse({ id: 'x', title: 't' });
    expect(tag.error!.issues.map((i) => i.path)).toEqual([['id']]);
  });
});
