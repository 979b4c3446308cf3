import { BIGINT, DuckDBDataChunk, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './quote.js';

const CHUNK = 2048;

/**
 * Bulk-stages one JSON document per row into a fresh temp table `(doc VARCHAR)` through the
 * appender. One string per row is the cheapest crossing from JS into DuckDB (measured in
 * bench/warehouse.ts); DuckDB then types the documents in parallel with json_transform.
 */
export async function stageDocs(connection: DuckDBConnection, table: string, docs: readonly string[]): Promise<void> {
  await connection.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (doc VARCHAR)`);
  await appendColumn(connection, table, VARCHAR, docs);
}

/** Stages ids into a fresh temp table `(id BIGINT)`. */
export async function stageIds(connection: DuckDBConnection, table: string, ids: readonly number[]): Promise<void> {
  await connection.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (id BIGINT)`);
  await appendColumn(connection, table, BIGINT, ids.map((id) => BigInt(id)));
}

async function appendColumn(
  connection: DuckDBConnection,
  table: string,
  type: typeof VARCHAR | typeof BIGINT,
  values: readonly (string | bigint)[],
): Promise<void> {
  if (values.length === 0) return;
  const appender = await connection.createAppender(table);
  try {
    for (let start = 0; start < values.length; start += CHUNK) {
      const part = values.slice(start, start + CHUNK);
      const chunk = DuckDBDataChunk.create([type], part.length);
      chunk.setColumns([part as (string | bigint)[]]);
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}
