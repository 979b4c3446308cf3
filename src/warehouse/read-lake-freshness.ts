import { FRESHNESS_VIEW } from './write-lake-catalog.js';

export interface TableFreshness {
  table: string;
  /** When this table's current lake copy was published. */
  publishedAt: string;
  rows: number;
}

/** Each lake table's last publish, read through the catalog (empty when the catalog has no manifest to read). */
export async function readLakeFreshness(r: { query(sql: string): Promise<Record<string, unknown>[]> }): Promise<TableFreshness[]> {
  const rows = await r.query(`SELECT table_name, published_at, rows FROM ${FRESHNESS_VIEW} WHERE published_at IS NOT NULL ORDER BY table_name`).catch(() => []);
  return rows.map((x) => ({ table: String(x.table_name), publishedAt: iso(x.published_at), rows: Number(x.rows) }));
}

/** DuckDB gives TIMESTAMPTZ as a Date (String() of it would drop the milliseconds). */
export function iso(v: unknown): string {
  return (v instanceof Date ? v : new Date(String(v))).toISOString();
}
