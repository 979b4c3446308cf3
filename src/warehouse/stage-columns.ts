import { DuckDBDataChunk, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './quote.js';
import { run } from './sql-run.js';

/** Rows a DataChunk holds (DuckDB's vector size): each append of staged rows is one chunk. */
export const CHUNK = 2048;

/** One item's text values, one per staged column (null is SQL NULL). */
export type EncodeRow<T> = (item: T) => readonly (string | null)[];

/**
 * Stages one row of text values per item into a fresh temp table of VARCHAR `columns`, encoding
 * and appending 2,048 items at a time, so an encoded string lives only until its chunk is
 * appended (young-generation garbage). Encoding whole slices ahead, to overlap JS with DuckDB
 * statements, held them long enough to be promoted and cost more CPU in garbage collection than
 * the overlap saved on two shared cores (figures: bench/results/notes.md, "stage-columns").
 * `encode` may throw to reject an item.
 */
export async function stageColumns<T>(connection: DuckDBConnection, table: string, columns: readonly string[], items: readonly T[], encode: EncodeRow<T>): Promise<void> {
  await run(connection, `CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (${columns.map((c) => `${quoteIdent(c)} VARCHAR`).join(', ')})`);
  if (items.length === 0) return;
  const width = columns.length;
  const types = new Array(width).fill(VARCHAR);
  const appender = await connection.createAppender(table);
  try {
    for (let start = 0; start < items.length; start += CHUNK) {
      const n = Math.min(CHUNK, items.length - start);
      const cols = Array.from({ length: width }, () => new Array<string | null>(n));
      for (let i = 0; i < n; i++) {
        const row = encode(items[start + i]!);
        for (let c = 0; c < width; c++) cols[c]![i] = row[c] ?? null;
      }
      const chunk = DuckDBDataChunk.create(types, n);
      chunk.setColumns(cols);
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}
