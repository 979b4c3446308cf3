import type { DuckDBConnection } from '@duckdb/node-api';

/** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(connection: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  await connection.run('BEGIN TRANSACTION');
  try {
    const result = await fn();
    await connection.run('COMMIT');
    return result;
  } catch (err) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The first column of the first row, as a number. */
export async function readCount(connection: DuckDBConnection, sql: string): Promise<number> {
  const reader = await connection.runAndReadAll(sql);
  const value = reader.getRows()[0]?.[0];
  return value === null || value === undefined ? 0 : Number(value);
}
