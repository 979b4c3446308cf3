import { DuckDBDataChunk, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './quote.js';

const CHUNK = 2048;

/**
 * Rows per slice. Small enough that JS and DuckDB take turns often (one slice is ~0.1 s of
 * either), large enough that per-statement overhead stays small.
 */
export const SLICE_ROWS = 32_768;

/** One item's text values, one per staged column (null is SQL NULL). */
export type EncodeRow<T> = (item: T) => readonly (string | null)[];

/** Which slice `sliceSql` is asked for: its index, its row count, whether it is the last. */
export interface Slice {
  index: number;
  rows: number;
  last: boolean;
}

/**
 * Stages `items` slice by slice into a fresh temp table `table` of VARCHAR `columns` and runs
 * `sliceSql(k)` over slice k, overlapping JS with DuckDB: slice k+1 is encoded in JS while
 * DuckDB runs slice k's SQL (statements run on libuv threads, not the JS thread). The encoding
 * (JSON.stringify of raw above all) and DuckDB's typing and writing then share the two cores
 * instead of taking turns. `table` is replaced before each slice, so `sliceSql` sees only that
 * slice. `encode` may throw to reject an item; the error is raised once the slice in flight ends.
 */
export async function stagePipelined<T>(
  connection: DuckDBConnection,
  table: string,
  columns: readonly string[],
  items: readonly T[],
  encode: EncodeRow<T>,
  sliceSql: (slice: Slice) => string,
  sliceRows = SLICE_ROWS,
): Promise<void> {
  const ddl = `CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} (${columns.map((c) => `${quoteIdent(c)} VARCHAR`).join(', ')})`;
  let pending: Promise<unknown> | undefined;
  try {
    for (let start = 0, index = 0; start < items.length; start += sliceRows, index++) {
      const end = Math.min(items.length, start + sliceRows);
      const chunks = encodeSlice(items, start, end, columns.length, encode);
      if (pending) await pending;
      pending = undefined;
      await connection.run(ddl);
      await appendChunks(connection, table, columns.length, chunks);
      pending = connection.run(sliceSql({ index, rows: end - start, last: end === items.length }));
      // Handled here so a failure while the next slice is encoded is not reported as unhandled;
      // the `await` above still sees the rejection.
      pending.catch(() => undefined);
    }
    if (pending) await pending;
  } catch (err) {
    if (pending) await pending.catch(() => undefined);
    throw err;
  }
}

// Columns of up to CHUNK values each, ready for DuckDBDataChunk.setColumns.
function encodeSlice<T>(items: readonly T[], start: number, end: number, width: number, encode: EncodeRow<T>): (string | null)[][][] {
  const chunks: (string | null)[][][] = [];
  for (let from = start; from < end; from += CHUNK) {
    const n = Math.min(CHUNK, end - from);
    const cols = Array.from({ length: width }, () => new Array<string | null>(n));
    for (let i = 0; i < n; i++) {
      const row = encode(items[from + i]!);
      for (let c = 0; c < width; c++) cols[c]![i] = row[c] ?? null;
    }
    chunks.push(cols);
  }
  return chunks;
}

async function appendChunks(connection: DuckDBConnection, table: string, width: number, chunks: readonly (string | null)[][][]): Promise<void> {
  const appender = await connection.createAppender(table);
  try {
    const types = new Array(width).fill(VARCHAR);
    for (const cols of chunks) {
      const chunk = DuckDBDataChunk.create(types, cols[0]!.length);
      chunk.setColumns(cols);
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}
