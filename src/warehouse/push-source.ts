import { quoteIdent, quoteLiteral } from './quote.js';
import type { WarehouseQuery } from './types.js';

/** Where push rows come from: a table or view, a file DuckDB reads itself, or a read-only query. */
export type PushSourceTarget = { kind: 'relation'; name: readonly string[] } | { kind: 'file'; format: 'csv' | 'parquet' | 'json'; path: string } | { kind: 'query'; text: string };

const FILE_READERS = { csv: 'read_csv', parquet: 'read_parquet', json: 'read_json' } as const;

/**
 * The SELECT that yields the source rows. Names are quoted part by part, a file path is a quoted
 * literal, and a query is wrapped as a subquery, so only statements that yield rows can run.
 */
export function pushSourceSelect(target: PushSourceTarget): string {
  switch (target.kind) {
    case 'relation':
      return `SELECT * FROM ${target.name.map(quoteIdent).join('.')}`;
    case 'file':
      return `SELECT * FROM ${FILE_READERS[target.format]}(${quoteLiteral(target.path)})`;
    case 'query':
      return `SELECT * FROM (${target.text}) AS _push_source`;
  }
}

/**
 * At most `limit` source rows, each as DuckDB's own JSON text of the row: dates as `YYYY-MM-DD`,
 * lists as arrays and JSON columns as objects, whatever the driver's conversions.
 */
export async function readPushSourceJson(db: WarehouseQuery, target: PushSourceTarget, limit: number): Promise<string[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const rows = await db.query(`SELECT to_json(_s)::VARCHAR AS j FROM (${pushSourceSelect(target)}) AS _s LIMIT ?`, [limit]);
  return rows.map((r) => String(r.j));
}
