import { describe, expect, it } from 'vitest';
import { comparable } from '../../src/verify/compare-values.js';
import { customValueDifferences } from '../../src/verify/custom-value-differences.js';
import { membershipDifferences } from '../../src/verify/membership-differences.js';
import { formatSummary, summarizeDifferences } from '../../src/verify/summarize-differences.js';

describe('verify value comparison', () => {
  it('compares times as instants and shows them as ISO 8601 UTC', () => {
    const ms = Date.UTC(2026, 10, 21, 9, 55, 36);
    expect(comparable('TIMESTAMPTZ', ms)).toBe('2026-11-21T09:55:36.000Z');
    expect(comparable('TIMESTAMPTZ', '2026-11-21T09:55:36.000Z')).toBe(comparable('TIMESTAMPTZ', ms));
    expect(comparable('TIMESTAMPTZ', '2026-11-21T04:55:36-05:00')).toBe(comparable('TIMESTAMPTZ', ms));
    expect(comparable('TIMESTAMPTZ', null)).toBeNull();
  });

  it('treats null, undefined, empty text and empty JSON as no value; numbers and id lists by value', () => {
    expect(comparable('VARCHAR', '')).toBe(comparable('VARCHAR', null));
    expect(comparable('BIGINT', '12')).toBe(comparable('BIGINT', 12));
    expect(comparable('DOUBLE', 1.5)).toBe('1.5');
    expect(comparable('BOOLEAN', 1)).toBe(comparable('BOOLEAN', true));
    expect(comparable('BIGINT[]', [{ id: 3 }, { id: 1 }])).toBe(comparable('BIGINT[]', '1,3'));
    expect(comparable('JSON', '[]')).toBeNull();
    expect(comparable('JSON', '{"b":1,"a":2}')).toBe(comparable('JSON', { a: 2, b: 1 }));
    expect(comparable('DATE', '1990-04-01')).toBe('1990-04-01');
  });

  it('custom values: both CRM shapes (object by slug, [] for none) against the warehouse JSON', () => {
    expect(customValueDifferences({}, '[]')).toEqual([]);
    expect(customValueDifferences({ tier: 'gold', interests: ['a', 'b'] }, '{"interests":["a","b"],"tier":"gold","empty":""}')).toEqual([]);
    expect(customValueDifferences({ tier: 'gold' }, '{"tier":"silver"}')).toEqual([{ slug: 'tier', warehouse: 'silver', crm: 'gold' }]);
    expect(customValueDifferences({ tier: 'gold' }, '{}')).toEqual([{ slug: 'tier', warehouse: null, crm: 'gold' }]);
  });

  it('memberships: missing and extra rows, skipping contacts already reported', () => {
    const crm = new Map([
      [1, [10, 11]],
      [2, [10]],
    ]);
    const held: [number, number][] = [
      [1, 10],
      [2, 10],
      [2, 12],
      [3, 10], // contact 3 is not in the CRM and was reported as deleted there
      [4, 11], // contact 4 is tombstoned: its membership is stale
    ];
    const diffs = membershipDifferences('tag', crm, held, new Set([3]));
    expect(diffs.map((d) => [d.kind, d.id, d.field])).toEqual([
      ['missing_membership', '1', 'tag 11'],
      ['extra_membership', '2', 'tag 12'],
      ['extra_membership', '4', 'tag 11'],
    ]);
  });

  it('summarizes by stream and kind with a count and the first ids', () => {
    const diffs = [7, 8, 9, 10, 11, 12].map((id) => ({ stream: 'contacts', kind: 'deleted_in_crm' as const, id: String(id), detail: `contact ${id} gone` }));
    const s = summarizeDifferences(diffs, 3);
    expect(s).toMatchObject({ ok: false, total: 6, groups: [{ stream: 'contacts', kind: 'deleted_in_crm', count: 6 }] });
    expect(s.groups[0]!.examples.map((e) => e.id)).toEqual(['7', '8', '9']);
    expect(formatSummary(s, ['contacts'])).toMatch(/contacts +deleted in crm +6 {2}ids 7, 8, 9, …\n/);
    expect(formatSummary(summarizeDifferences([]), ['contacts', 'tags'])).toBe('the warehouse matches the CRM (contacts, tags)\n');
  });
});
