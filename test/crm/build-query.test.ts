import { describe, expect, it } from 'vitest';
import { buildQuery, type QueryValue } from '../../src/crm/transport.js';

/** What buildQuery must equal: URLSearchParams over the defined values, arrays as `name[]`. */
function reference(query: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) params.append(`${k}[]`, String(x));
    else params.append(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

describe('buildQuery', () => {
  const queries: Array<Record<string, QueryValue>> = [
    {},
    { page: 1, per_page: 100, order_by: 'id', order_type: 'ASC', sort_by: 'id', sort_type: 'ASC', search: undefined, statuses: undefined },
    { page: 2, per_page: 15, custom_fields: 'true', search: 'ada lovelace' },
    { search: 'a+b&c=d/é?', page: 1 },
    { statuses: ['subscribed', 'pending'], page: 1 },
    { tags: [1, 2], lists: [] },
    { 'with[]': 'stats', page: -1, n: 1e21, f: 0.5, z: '', b: false, u: null },
    { "q!~'()*._-": "!~'()*._- x" },
    { bad: '\uD800' },
  ];
  it.each(queries.map((q) => [JSON.stringify(q), q]))('%s', (_name, q) => {
    expect(buildQuery(q)).toBe(reference(q));
  });
  it('an absent query is empty', () => {
    expect(buildQuery(undefined)).toBe('');
  });
});
