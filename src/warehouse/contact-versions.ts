import type { DuckDBConnection } from '@duckdb/node-api';
import { readRows } from './sql-run.js';

/** Current updated_at (epoch ms) per contact in the warehouse, to never load an older fetch over it. */
export async function readContactVersions(conn: DuckDBConnection, ids: readonly number[]): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>();
  if (ids.length === 0) return out;
  const rows = await readRows(conn, `SELECT id, epoch_ms(updated_at) AS u FROM contacts WHERE id IN (SELECT unnest(from_json($1::JSON, '["BIGINT"]')))`, [JSON.stringify(ids)]);
  for (const row of rows) out.set(Number(row.id), row.u === null ? null : Number(row.u));
  return out;
}
