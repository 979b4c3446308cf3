import { BIGINT, DuckDBDataChunk, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './quote.js';
import { run } from './sql-run.js';

const CHUNK = 2048;

const BLOB_BYTES = 2 << 20;

/**
 * Bulk-stages JSON documents into a fresh temp table `(doc VARCHAR)` through the appender, many
 * documents per value joined by newlines (JSON.stringify never emits a raw newline), which
 * crosses from JS into DuckDB once per ~2 MB instead of once per row; compared with a value per
 * row and an NDJSON temp file by bench/warehouse-stage-probe.ts (bench/results/warehouse-stage.json).
 * Read back with `stagedDocsSql`.
 */
export async function stageDocs(connection: DuckDBConnection, table: string, docs: readonly string[]): Promise<void> {
  await stageRecords(connection, table, docs, '\n');
}

/** One row per staged document: `(SELECT doc FROM ...)` for use in FROM. */
export function stagedDocsSql(table: string): string {
  return stagedRecordsSql(table, '\n');
}

/**
 * `stageDocs` for any text records that never contain `separator` (one character): appended
 * as ~2 MB blobs; read back one record per row with `stagedRecordsSql`.
 */
export async function stageRecords(connection: DuckDBConnection, table: string, records: readonly string[], separator: string): Promise<void> {
  await run(connection, `CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (doc VARCHAR)`);
  const blobs: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < records.length; i++) {
    bytes += records[i]!.length + 1;
    if (bytes >= BLOB_BYTES) {
      blobs.push(records.slice(start, i + 1).join(separator));
      start = i + 1;
      bytes = 0;
    }
  }
  if (start < records.length) blobs.push(records.slice(start).join(separator));
  await appendColumn(connection, table, VARCHAR, blobs);
}

/** One row per staged record: `(SELECT doc FROM ...)` for use in FROM. */
export function stagedRecordsSql(table: string, separator: string): string {
  return `(SELECT unnest(string_split(doc, chr(${separator.charCodeAt(0)}))) AS doc FROM ${quoteIdent(table)})`;
}

/** Stages ids into a fresh temp table `(id BIGINT)`. */
export async function stageIds(connection: DuckDBConnection, table: string, ids: readonly number[]): Promise<void> {
  await run(connection, `CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (id BIGINT)`);
  await appendColumn(
    connection,
    table,
    BIGINT,
    ids.map((id) => BigInt(id)),
  );
}

async function appendColumn(connection: DuckDBConnection, table: string, type: typeof VARCHAR | typeof BIGINT, values: readonly (string | bigint)[]): Promise<void> {
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
