import type { WarehouseHandle } from './duckdb-warehouse.js';
import { quoteIdent } from './quote.js';
import { runQuery, type QueryResult } from './run-query.js';
import type { WarehouseQuery } from './types.js';

/** The demo's sample question: live contacts by status, and how many of them carry a tag. */
export const DEMO_QUERY = `SELECT status, count(*) AS contacts, count(*) FILTER (WHERE len(tag_ids) > 0) AS tagged
  FROM contacts WHERE _deleted_at IS NULL GROUP BY status ORDER BY contacts DESC`;

/** What the demo suggests trying next with `crmsync query`. */
export const CURRENT_CONTACTS_SAMPLE = 'SELECT * FROM contacts_current LIMIT 5';

/** Row counts of `tables`, in their order. */
export async function tableRowCounts(w: WarehouseQuery, tables: readonly string[]): Promise<{ table: string; rows: number }[]> {
  const out: { table: string; rows: number }[] = [];
  for (const table of tables) {
    const rows = await w.query(`SELECT count(*) AS n FROM ${quoteIdent(table)}`);
    out.push({ table, rows: Number(rows[0]?.n ?? 0) });
  }
  return out;
}

/** DEMO_QUERY's answer (a few rows: one per status). */
export function runDemoQuery(w: WarehouseHandle): Promise<QueryResult> {
  return runQuery(w.connection, DEMO_QUERY, 100);
}
