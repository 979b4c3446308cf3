import type { DuckDBConnection } from '@duckdb/node-api';
import { WarehouseInputError, WarehouseQueryError } from './errors.js';
import { plain } from './plain-rows.js';

export const MAX_SQL_BYTES = 1 << 20;

export interface QueryResult {
  columns: string[];
  rows: Record<string, unknown>[];
  /** True when more than maxRows rows were available and the rest were not read. */
  truncated: boolean;
}

/** Streams at most `maxRows` rows of an analyst's query (the rest is never materialized in JS). */
export async function runQuery(connection: DuckDBConnection, sql: string, maxRows: number): Promise<QueryResult> {
  if (Buffer.byteLength(sql) > MAX_SQL_BYTES) throw new WarehouseInputError(`The query is longer than ${MAX_SQL_BYTES} bytes; put large inputs in a table instead.`);
  let reader;
  try {
    reader = await connection.streamAndReadUntil(sql, maxRows + 1);
  } catch (err) {
    throw new WarehouseQueryError(err instanceof Error ? err.message : String(err), { cause: err });
  }
  const columns = reader.columnNames();
  const all = reader.getRowObjectsJS();
  const rows = all.slice(0, maxRows).map((r) => plain(r) as Record<string, unknown>);
  return { columns, rows, truncated: all.length > maxRows || !reader.done };
}
