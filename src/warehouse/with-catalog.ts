import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../logger.js';
import { NO_EXTENSION_INSTALLS } from './duckdb-extensions.js';
import { DuckDbWarehouse, type WarehouseHandle } from './duckdb-warehouse.js';
import { CatalogNotFoundError } from './errors.js';
import { catalogName } from './open-warehouse.js';
import { readRows } from './sql-run.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { iso } from './read-lake-freshness.js';
import { findSqlDir } from './sql-dir.js';
import { FRESHNESS_VIEW } from './write-lake-catalog.js';

export interface WithCatalogOptions {
  catalogPath: string;
  logger?: Logger;
  /**
   * With no catalog yet: `throw` CatalogNotFoundError (default), or `empty`: an empty read-only
   * DuckDB (source.publishedAt null), for SQL that reads only files (`read_csv('people.csv')`).
   */
  whenMissing?: 'throw' | 'empty';
}

/**
 * Scoped read access for `query`, `status`, `verify`, `report`: a fresh in-memory DuckDB with the
 * catalog attached read-only (and made the default, so SQL reads as it would on the warehouse).
 * Never opens the warehouse file, so it works while a worker owns that file; the catalog is
 * replaced by rename, so it is whole whenever it is opened. The handle refuses every write.
 */
export async function withCatalog<T>(opts: WithCatalogOptions, fn: (r: WarehouseHandle) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withCatalogOnce(opts, fn);
    } catch (err) {
      if (attempt >= LAKE_RACE_ATTEMPTS || !isLakeRace(err, dirname(opts.catalogPath))) throw err;
      opts.logger?.debug({ attempt, err: err instanceof Error ? err.message : String(err) }, 'a lake file changed under the read (a publish swapped its table); reading again');
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** Reads of the lake a publish raced, each tried again on a fresh DuckDB (they are read-only). */
const LAKE_RACE_ATTEMPTS = 4;

/**
 * A read that listed a table's files through its symlink just before a publish swapped it, then
 * opened one after: the file is gone from the new generation (its name carries its generation),
 * or, in a lake written before that, was replaced under the same name and read as corrupt.
 */
export function isLakeRace(err: unknown, lakePath: string): boolean {
  if (err instanceof CatalogNotFoundError) return false;
  const message = err instanceof Error ? err.message : String(err);
  if (/TProtocolException|don't know what type|No magic bytes found|Invalid Parquet file/i.test(message)) return true;
  return message.includes(lakePath) && /No files found|No such file|could not open|cannot open|does not exist/i.test(message);
}

async function withCatalogOnce<T>(opts: WithCatalogOptions, fn: (r: WarehouseHandle) => Promise<T>): Promise<T> {
  const missing = !existsSync(opts.catalogPath);
  if (missing && opts.whenMissing !== 'empty') throw new CatalogNotFoundError(opts.catalogPath);
  const instance = await DuckDBInstance.create(':memory:', NO_EXTENSION_INSTALLS);
  let handle: WarehouseHandle;
  try {
    const connection = await instance.connect();
    try {
      // Timestamps print and compare in UTC whatever the machine's zone.
      const name = quoteIdent(catalogName(opts.catalogPath));
      await connection.run(`SET TimeZone = 'UTC'`);
      if (!missing) await connection.run(`ATTACH ${quoteLiteral(opts.catalogPath)} AS ${name} (READ_ONLY); USE ${name}`);
      const published = missing ? [] : await readRows(connection, `SELECT max(published_at) AS at FROM ${FRESHNESS_VIEW}`).catch(() => []);
      const at = published[0]?.at;
      handle = new DuckDbWarehouse({
        instance,
        connection,
        source: { kind: 'catalog', path: opts.catalogPath, publishedAt: at ? iso(at) : null },
        lakePath: dirname(opts.catalogPath),
        sqlDir: findSqlDir(),
        siteTimeZone: 'UTC',
        ...(opts.logger ? { logger: opts.logger } : {}),
      });
    } catch (err) {
      connection.closeSync();
      throw err;
    }
  } catch (err) {
    instance.closeSync();
    throw err;
  }
  try {
    return await fn(handle);
  } finally {
    await handle.close();
  }
}
