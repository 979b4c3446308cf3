import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { BUCKET_COLUMN, LAKE_TABLES } from './lake-layout.js';
import { readLakeManifest } from './lake-manifest.js';
import { listViewFiles } from './migrate.js';
import { quoteIdent, quoteLiteral } from './quote.js';

/**
 * Turns an in-memory DuckDB into a reader of the Parquet lake: one view per published table over
 * its current generation (resolved once, so every view reads the same publish), then the
 * analyst views of sql/views/ where their tables exist. Returns when the lake was published.
 */
export async function attachLakeViews(connection: DuckDBConnection, lakePath: string, sqlDir: string): Promise<{ publishedAt: string | null; tables: string[] }> {
  const manifest = await readLakeManifest(lakePath);
  const tables: string[] = [];
  for (const [table, layout] of Object.entries(LAKE_TABLES)) {
    const link = join(lakePath, table);
    if (!existsSync(link)) continue;
    let dir: string;
    try {
      dir = realpathSync(link);
    } catch {
      continue; // a generation pruned under us: the table is left out rather than failing all
    }
    const glob = quoteLiteral(join(dir, '**', '*.parquet'));
    const select = layout.kind === 'bucket' ? `SELECT * EXCLUDE (${BUCKET_COLUMN}) FROM read_parquet(${glob}, hive_partitioning = true)` : `SELECT * FROM read_parquet(${glob})`;
    await connection.run(`CREATE OR REPLACE VIEW ${quoteIdent(table)} AS ${select}`);
    tables.push(table);
  }
  // Views over tables the lake does not hold (other modules' tables) are skipped.
  for (const v of listViewFiles(sqlDir)) {
    await connection.run(v.sql).catch(() => undefined);
  }
  return { publishedAt: manifest?.publishedAt ?? null, tables };
}
