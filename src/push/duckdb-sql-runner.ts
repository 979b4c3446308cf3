import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { SqlRunner } from './sql-runner.js';

/** A SqlRunner over one DuckDB connection (JSON-compatible values: BIGINT may come back as text). */
export function duckdbSqlRunner(connection: DuckDBConnection): SqlRunner {
  return {
    async query(sql, params = []) {
      const reader = await connection.runAndReadAll(sql, params as DuckDBValue[]);
      return reader.getRowObjectsJson() as Record<string, unknown>[];
    },
  };
}
