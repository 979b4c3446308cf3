import type { DuckDBConnection } from '@duckdb/node-api';
import { listViewFiles } from './migrate.js';
import { run } from './sql-run.js';

/**
 * A reader of a DuckDB file migrated by an older crmsync sees the views as that version wrote
 * them. This defines this version's views of sql/views/ as temporary ones on the connection
 * (allowed read-only), which shadow the stored ones. A view whose tables the file lacks is left out.
 * Returns the names of the files that could not be applied.
 */
export async function useCurrentViews(connection: DuckDBConnection, sqlDir: string): Promise<string[]> {
  const skipped: string[] = [];
  for (const v of listViewFiles(sqlDir)) {
    const sql = v.sql.replace(/\bCREATE\s+OR\s+REPLACE\s+(VIEW|MACRO)\b/gi, 'CREATE OR REPLACE TEMP $1');
    await run(connection, sql).catch(() => skipped.push(v.name));
  }
  return skipped;
}
