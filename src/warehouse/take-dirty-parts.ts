import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from './quote.js';
import { inTransaction, readRows, run } from './sql-run.js';

/** Lake partitions taken off `_lake_dirty` for a publish: table name -> partition keys. */
export type TakenParts = Readonly<Record<string, readonly string[]>>;

const list = (values: readonly string[]): string => values.map(quoteLiteral).join(', ') || 'NULL';

/**
 * Removes the dirty marks of `buckets` of `tables` and returns them, in one transaction, for a
 * publish that reads on another connection. A load after this marks its buckets again, so
 * nothing it writes can be lost to a publish that read before it.
 */
export async function takeDirtyParts(connection: DuckDBConnection, tables: readonly string[], buckets: readonly number[]): Promise<TakenParts> {
  const where = `table_name IN (${list(tables)}) AND part IN (${list(buckets.map((b) => String(Math.trunc(b))))})`;
  const rows = await inTransaction(connection, async () => {
    const taken = await readRows(connection, `SELECT table_name, part FROM _lake_dirty WHERE ${where} ORDER BY table_name, part`);
    if (taken.length > 0) await run(connection, `DELETE FROM _lake_dirty WHERE ${where}`);
    return taken;
  });
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[String(r.table_name)] ??= []).push(String(r.part));
  return out;
}

/** Puts taken marks back (their publish failed): the next publish writes those partitions. */
export async function restoreDirtyParts(connection: DuckDBConnection, taken: TakenParts): Promise<void> {
  const pairs = Object.entries(taken).flatMap(([t, parts]) => parts.map((p) => `(${quoteLiteral(t)}, ${quoteLiteral(p)})`));
  if (pairs.length > 0) await run(connection, `INSERT OR IGNORE INTO _lake_dirty VALUES ${pairs.join(', ')}`);
}
