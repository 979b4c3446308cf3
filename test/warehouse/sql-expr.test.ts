import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/warehouse/quote.js';
import { timestampExpr } from '../../src/warehouse/sql-expr.js';

// The definition before the `Z` shortcut: the shortcut must not change a single value.
function regexOnly(expr: string, tz: string): string {
  return `CASE WHEN ${expr} IS NULL OR ${expr} = '' THEN NULL
    WHEN regexp_matches(${expr}, '(Z|[+-]\\d\\d(:?\\d\\d)?)$') AND length(${expr}) > 10 THEN CAST(${expr} AS TIMESTAMPTZ)
    ELSE timezone(${quoteLiteral(tz)}, CAST(${expr} AS TIMESTAMP)) END`;
}

describe('timestampExpr', () => {
  it('reads every form as the regex-only definition did', async () => {
    const values = [
      '2026-11-21T04:55:36.123Z',
      '2026-11-21T04:55:36Z',
      '2026-11-21 04:55:36Z',
      '2024-03-10 01:30:00',
      '2026-07-01 09:00:00',
      '2026-07-01T09:00:00+02:00',
      '2026-07-01 09:00:00-0500',
      '2026-07-01 09:00:00+05',
      '2026-07-01',
      '',
      null,
    ];
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    try {
      await c.run(`SET TimeZone = 'UTC'`);
      for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
        const rows = (
          await c.runAndReadAll(`SELECT CAST(${timestampExpr('v', tz)} AS VARCHAR) AS a, CAST(${regexOnly('v', tz)} AS VARCHAR) AS b
          FROM (VALUES ${values.map((v) => `(${v === null ? 'NULL' : quoteLiteral(v)})`).join(', ')}) t(v)`)
        ).getRowObjects();
        expect(rows.filter((r) => r.a !== null)).toHaveLength(values.length - 2);
        for (const r of rows) expect(r.a).toBe(r.b);
      }
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  });
});
