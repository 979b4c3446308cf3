import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { plain } from './plain-rows.js';
import type { WarehouseQuery } from './types.js';

/**
 * The one way src/warehouse runs a statement: parameters are always bound (never spliced into the
 * text), identifiers go through `quoteIdent`, and results come back as plain values (BIGINT as a
 * number when safe, else a string; timestamps as Date). Bulk loads use the appender instead.
 */
const MAX_PARAMS = 10_000;

type Params = readonly unknown[];

/** Runs a statement for its effect. */
export async function run(connection: DuckDBConnection, sql: string, params: Params = []): Promise<void> {
  if (params.length === 0) await connection.run(sql);
  else await connection.run(sql, bind(params));
}

/** Runs a query and returns its rows as plain objects. */
export async function readRows(connection: DuckDBConnection, sql: string, params: Params = []): Promise<Record<string, unknown>[]> {
  const reader = params.length === 0 ? await connection.runAndReadAll(sql) : await connection.runAndReadAll(sql, bind(params));
  return reader.getRowObjectsJS().map((row) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) out[k] = plain(v);
    return out;
  });
}

/** The first column of the first row (undefined when there is no row). */
export async function readValue(connection: DuckDBConnection, sql: string, params: Params = []): Promise<unknown> {
  const reader = params.length === 0 ? await connection.runAndReadAll(sql) : await connection.runAndReadAll(sql, bind(params));
  return plain(reader.getRows()[0]?.[0]);
}

/** The first column of the first row, as a number (0 for no row or NULL). */
export async function readCount(connection: DuckDBConnection, sql: string, params: Params = []): Promise<number> {
  const value = await readValue(connection, sql, params);
  return value === null || value === undefined ? 0 : Number(value);
}

/** Work a caller asked to commit with the next transaction on a connection (`withRecordInCommit`). */
const beforeCommit = new WeakMap<DuckDBConnection, { record: () => Promise<void>; done: boolean }>();

/** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(connection: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  // A record committed with an earlier transaction of the load would say it was durable too soon.
  if (beforeCommit.get(connection)?.done) throw new Error('a load under withRecordInCommit committed a second transaction; record with the last one instead.');
  await run(connection, 'BEGIN TRANSACTION');
  try {
    const result = await fn();
    const hook = beforeCommit.get(connection);
    if (hook && !hook.done) {
      hook.done = true;
      await hook.record();
    }
    await run(connection, 'COMMIT');
    return result;
  } catch (err) {
    await run(connection, 'ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Runs `fn`, a load that commits at most one transaction, and `record` inside that transaction
 * just before its COMMIT: the load and its record are durable together, with one WAL sync instead
 * of one per commit (bench/results/notes.md, "page log"). When `fn` commits none, `record` runs
 * after it in a transaction of its own. `fn` keeps its own errors: `record` joins only a
 * transaction `fn` opened, never wraps `fn` (a statement failing inside a transaction would abort
 * it, and a cleanup after it would throw in place of the first error).
 */
export async function withRecordInCommit<T>(connection: DuckDBConnection, record: () => Promise<void>, fn: () => Promise<T>): Promise<T> {
  if (beforeCommit.has(connection)) throw new Error('withRecordInCommit cannot be nested on one connection; record both in the outer call.');
  const hook = { record, done: false };
  beforeCommit.set(connection, hook);
  let result: T;
  try {
    result = await fn();
  } finally {
    beforeCommit.delete(connection);
  }
  if (!hook.done) await inTransaction(connection, record);
  return result;
}

function bind(params: Params): DuckDBValue[] {
  if (params.length > MAX_PARAMS) throw new RangeError(`At most ${MAX_PARAMS} parameters per statement.`);
  return params.map((v) => (v instanceof Date ? v.toISOString() : v === undefined ? null : v)) as DuckDBValue[];
}

/** A `WarehouseQuery` over a bare connection (tests and benchmarks that open DuckDB themselves). */
export function queryOver(connection: DuckDBConnection): WarehouseQuery {
  return { query: (sql, params) => readRows(connection, sql, params) };
}
