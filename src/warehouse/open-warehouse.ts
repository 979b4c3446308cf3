import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '../logger.js';
import { DuckDbWarehouse, type WarehouseHandle } from './duckdb-warehouse.js';
import { isDuckDbLockError, WarehouseLockedError } from './errors.js';
import { attachLakeViews } from './lake-reader.js';
import { findSqlDir } from './sql-dir.js';

export interface OpenWarehouseOptions {
  dbPath: string;
  lakePath: string;
  logger?: Logger;
  readOnly?: boolean;
  /** Zone-less CRM timestamps are read in this IANA zone (default UTC). */
  siteTimeZone?: string;
  /** Folder of numbered migrations (default: the project's sql/). */
  sqlDir?: string;
}

// DuckDB checkpoints whenever the write-ahead log passes 16 MB, i.e. after nearly every
// 5,000-contact load, and those checkpoints cost more than the loads' own inserts. Write scopes
// checkpoint when they end anyway (withWarehouse), so fewer checkpoints within a scope only save
// work: 100k contacts in 5,000-row loads took 10-30% less CPU, closing checkpoint included
// (bench/warehouse-small-profile.ts, 16MB against 256MB).
const WRITER_CHECKPOINT_THRESHOLD = '256MB';

/**
 * Opens the DuckDB file (created if needed unless read-only). Does not migrate and does not wait
 * for locks: a held lock is a WarehouseLockedError. Prefer withWarehouse, which does both.
 */
export async function openWarehouse(opts: OpenWarehouseOptions): Promise<WarehouseHandle> {
  const readOnly = opts.readOnly ?? false;
  if (!readOnly && opts.dbPath !== ':memory:') mkdirSync(dirname(opts.dbPath), { recursive: true });
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(opts.dbPath, readOnly ? { access_mode: 'READ_ONLY' } : { checkpoint_threshold: WRITER_CHECKPOINT_THRESHOLD });
  } catch (err) {
    if (isDuckDbLockError(err)) throw new WarehouseLockedError(opts.dbPath, 0, { cause: err });
    throw err;
  }
  const connection = await connectUtc(instance);
  return new DuckDbWarehouse({
    instance,
    connection,
    source: { kind: 'duckdb', path: opts.dbPath, readOnly },
    lakePath: opts.lakePath,
    sqlDir: opts.sqlDir ?? findSqlDir(),
    siteTimeZone: opts.siteTimeZone ?? 'UTC',
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
}

/** An in-memory DuckDB whose tables are views over the published Parquet lake (read-only). */
export async function openLakeReader(opts: { lakePath: string; sqlDir?: string; logger?: Logger }): Promise<WarehouseHandle> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await connectUtc(instance);
  const sqlDir = opts.sqlDir ?? findSqlDir();
  let publishedAt: string | null;
  try {
    ({ publishedAt } = await attachLakeViews(connection, opts.lakePath, sqlDir));
  } catch (err) {
    connection.closeSync();
    instance.closeSync();
    throw err;
  }
  return new DuckDbWarehouse({
    instance,
    connection,
    source: { kind: 'lake', path: opts.lakePath, publishedAt },
    lakePath: opts.lakePath,
    sqlDir,
    siteTimeZone: 'UTC',
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
}

// Timestamps print and compare in UTC whatever the machine's zone.
async function connectUtc(instance: DuckDBInstance): Promise<DuckDBConnection> {
  try {
    const connection = await instance.connect();
    await connection.run(`SET TimeZone = 'UTC'`);
    return connection;
  } catch (err) {
    instance.closeSync();
    throw err;
  }
}
