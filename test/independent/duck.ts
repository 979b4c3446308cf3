import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export type Row = Record<string, unknown>;
export type Q = (sql: string) => Promise<Row[]>;

/** Opens a DuckDB file (or `:memory:`) with `options`, hands `fn` a query function (rows as JSON values), and closes it. */
export async function duck<T>(path: string, options: Record<string, string>, fn: (q: Q) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(path, options);
  let con: DuckDBConnection | undefined;
  try {
    con = await instance.connect();
    const c = con;
    return await fn(async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson() as Row[]);
  } finally {
    con?.closeSync();
    instance.closeSync();
  }
}

/** The warehouse file `<dir>/crm.duckdb`, read-only (no crmsync process may hold it). */
export function readWarehouse<T>(dir: string, fn: (q: Q) => Promise<T>): Promise<T> {
  return duck(`${dir}/crm.duckdb`, { access_mode: 'READ_ONLY' }, fn);
}
