import { describe, expect, it } from 'vitest';
import type { CustomField } from '../../src/crm/types.js';
import { draftRows } from '../../src/push/draft-rows.js';
import { ignoredColumns, mapSourceRow, normalizeColumns } from '../../src/push/map-source-row.js';

const field = (slug: string, type: string, options: string[] = []): CustomField => ({ slug, label: slug, type, field_key: type, options, raw: {} });
const FIELDS = new Map(
  [
    field('favorite_color', 'select-one', ['Red', 'Green', 'Blue']),
    field('interests', 'checkbox', ['golf', 'chess']),
    field('membership_number', 'number'),
    field('renewal_date', 'date'),
    field('website', 'url'),
    field('note', 'text'),
  ].map((f) => [f.slug, f]),
);

function reasonFor(row: Record<string, unknown>): string {
  const r = mapSourceRow(row, 1, FIELDS);
  if (r.ok) throw new Error(`expected a rejection, got ${JSON.stringify(r.draft)}`);
  return r.rejection.reason;
}

describe('mapSourceRow', () => {
  it('maps every supported column and drops empty cells', () => {
    const r = mapSourceRow(
      {
        email: ' Ada@Example.test ',
        status: 'Subscribed',
        first_name: 'Ada',
        last_name: '',
        phone: 5550101,
        city: null,
        country: 'GB',
        date_of_birth: '1815-12-10',
        custom_values: '{"favorite_color":"Blue","note":""}',
        cf_membership_number: 42,
        cf_interests: ['golf', 'chess'],
        tags: ['vip', 3, '7'],
        lists: 'prospects, Newsletter',
        ignored_column: 'x',
      },
      4,
      FIELDS,
      'fp4',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.draft).toEqual({
      rowNumber: 4,
      sourceFingerprint: 'fp4',
      key: 'ada@example.test',
      body: {
        email: 'Ada@Example.test',
        status: 'subscribed',
        first_name: 'Ada',
        phone: '5550101',
        country: 'GB',
        date_of_birth: '1815-12-10',
        custom_values: { favorite_color: 'Blue', interests: ['golf', 'chess'], membership_number: '42' },
      },
      tags: ['vip', 3, 7],
      lists: ['prospects', 'Newsletter'],
    });
  });

  it('keeps a custom_values slug whose cf_ column is empty or NULL, and still checks it', () => {
    const row = { email: 'a@b.test', status: 'pending', custom_values: { membership_number: 1001, favorite_color: 'Green' }, cf_membership_number: null, cf_favorite_color: ' ' };
    const r = mapSourceRow(row, 1, FIELDS);
    expect(r.ok && r.draft.body.custom_values).toEqual({ membership_number: '1001', favorite_color: 'Green' });
    const bad = mapSourceRow({ ...row, custom_values: { membership_number: '12abc' } }, 2, FIELDS);
    expect(bad.ok ? 'sent' : bad.rejection.reason).toMatch(/^custom_values\.membership_number: "12abc" is not a number/);
    const wins = mapSourceRow({ ...row, cf_membership_number: 7 }, 3, FIELDS);
    expect(wins.ok && wins.draft.body.custom_values).toEqual({ membership_number: '7', favorite_color: 'Green' });
  });

  it.each([
    [{ email: 'not-an-email', status: 'subscribed' }, /^email: "not-an-email" is not a valid email/],
    [{ email: 'a@b', status: 'subscribed' }, /^email: .*not a valid email/],
    [{ status: 'subscribed' }, /^email: is empty/],
    [{ email: 'a@b.test', status: 'subscirbed' }, /^status: "subscirbed" is not a contact status.*silently store it as subscribed/],
    [{ email: 'a@b.test' }, /^status: is empty/],
    [{ email: 'a@b.test', status: 'pending', date_of_birth: '10/12/1815' }, /^date_of_birth: "10\/12\/1815" is not a date in YYYY-MM-DD/],
    [{ email: 'a@b.test', status: 'pending', date_of_birth: '2023-02-30' }, /^date_of_birth: "2023-02-30" is not a calendar date/],
    [{ email: 'a@b.test', status: 'pending', custom_values: { shoe_size: '42' } }, /^custom_values\.shoe_size: unknown custom field slug "shoe_size"; defined slugs: favorite_color/],
    [
      { email: 'a@b.test', status: 'pending', cf_favorite_color: 'Purple' },
      /^custom_values\.favorite_color: option "Purple" is not defined for select-one field "favorite_color"; defined options: "Red", "Green", "Blue"/,
    ],
    [{ email: 'a@b.test', status: 'pending', cf_interests: 'golf,tennis' }, /^custom_values\.interests: option "tennis"/],
    [{ email: 'a@b.test', status: 'pending', cf_renewal_date: '2027-13-01' }, /^custom_values\.renewal_date: "2027-13-01" is not a calendar date/],
    [{ email: 'a@b.test', status: 'pending', cf_membership_number: 'twelve' }, /^custom_values\.membership_number: "twelve" is not a number/],
    [{ email: 'a@b.test', status: 'pending', cf_website: 'ftp://x' }, /^custom_values\.website: "ftp:\/\/x" is not an http\(s\) URL/],
    [{ email: 'a@b.test', status: 'pending', custom_values: '{oops' }, /^custom_values: "\{oops" is not a JSON object/],
    [{ email: 'a@b.test', status: 'pending', first_name: 'x'.repeat(300) }, /^first_name: is 300 characters long \(limit 255\)/],
    [{ email: 'a@b.test', status: 'pending', tags: [0] }, /^tags: 0 is not a valid id/],
  ])('rejects %j with a reason naming the field', (row, reason) => {
    expect(reasonFor(row)).toMatch(reason);
  });
});

describe('draftRows', () => {
  it('rejects every row of an email given twice (case-insensitively) and keeps the others', () => {
    const rows: Record<string, unknown>[] = [
      { email: 'one@x.test', status: 'subscribed' },
      { email: 'dup@x.test', status: 'subscribed' },
      { email: 'bad', status: 'subscribed' },
      { email: 'DUP@x.test', status: 'pending' },
      { email: null, status: 'pending' },
    ];
    const { drafts, rejections } = draftRows(
      rows.map((data, i) => ({ rowNumber: i + 1, data, sourceFingerprint: `fp${i}` })),
      FIELDS,
    );
    expect(drafts.map((d) => d.key)).toEqual(['one@x.test']);
    expect(rejections.map((r) => [r.rowNumber, r.key, r.field])).toEqual([
      [3, 'bad', 'email'],
      [5, 'row:5', 'email'],
      [2, 'dup@x.test', 'email'],
      [4, 'dup@x.test', 'email'],
    ]);
    expect(rejections[2]?.reason).toContain('2 source rows have this email (rows 2, 4)');
  });
});

describe('normalizeColumns', () => {
  it('lower-cases known columns and the cf_ prefix, keeps the slug and other names', () => {
    const row = normalizeColumns({ Email: 'a@b.test', STATUS: 'pending', CF_favorite_color: 'Red', Notes: 'x' });
    expect(row).toEqual({ email: 'a@b.test', status: 'pending', cf_favorite_color: 'Red', Notes: 'x' });
    expect(ignoredColumns(row)).toEqual(['Notes']);
  });
});
