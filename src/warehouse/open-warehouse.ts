import { mkdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '../logger.js';
import { NO_EXTENSION_INSTALLS } from './duckdb-extensions.js';
import { DuckDbWarehouse, type WarehouseHandle } from './duckdb-warehouse.js';
import { isDuckDbLockError, WarehouseLockedError } from './errors.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { findSqlDir } from './sql-dir.js';

export interface OpenWarehouseOptions {
  dbPath: string;
  lakePath: string;
  /** Writers: the readers' catalog rewritten after each publish (default `<lake>/catalog.duckdb`). */
  catalogPath?: string;
  logger?: Logger;
  readOnly?: boolean;
  /** Zone-less CRM timestamps are read in this IANA zone (default UTC). */
  siteTimeZone?: string;
  /** Folder of numbered migrations (default: the project's sql/). */
  sqlDir?: string;
  /** Writers: rows per row group in what they write (default WRITER_ROW_GROUP_SIZE). */
  rowGroupSize?: number;
}

// DuckDB checkpoints whenever the write-ahead log passes 16 MB, i.e. after nearly every
// 5,000-contact load, and those checkpoints cost more than the loads' own inserts. Write scopes
// checkpoint when they end anyway (withWarehouse), so fewer checkpoints within a scope only save
// work (bench/warehouse-small-profile.ts; figures: bench/results/notes.md, "checkpoint").
export const WRITER_CHECKPOINT_THRESHOLD = '256MB';

/**
 * Rows per row group in what the writer writes (DuckDB's default is 122,880). A contact row
 * carries its raw record (its JSON), so one default row group of `contacts` is a large block of
 * text that a checkpoint compresses, and a lake publish reads, as a unit; the writer's resident
 * set grows far past its memory limit with it. Smaller groups lowered the peak and the load time
 * (bench/writer-row-groups.ts, figures in bench/results/writer-row-groups.json). Half the
 * default, not a quarter: a quarter made a backfill with real latency slower, half did not
 * (bench/results/notes.md, "row groups"). Readers are not affected: the file stays a plain
 * DuckDB file.
 */
export const WRITER_ROW_GROUP_SIZE = 61_440;

/**
 * Opens the DuckDB file (created if needed unless read-only). Does not migrate and does not wait
 * for locks: a held lock is a WarehouseLockedError. Writers go through a WarehouseOwner.
 *
 * A writer attaches the file to an in-memory instance, because only ATTACH sets the row group
 * size (WRITER_ROW_GROUP_SIZE), and makes it the default catalog under the name DuckDB gives it
 * when opened directly (the file's stem), so SQL reads the same either way. DuckDB spills to
 * `<file>.tmp`, as it does for a file opened directly (an in-memory instance would spill to
 * `.tmp` in the working directory).
 */
export async function openWarehouse(opts: OpenWarehouseOptions): Promise<WarehouseHandle> {
  const readOnly = opts.readOnly ?? false;
  const attach = !readOnly && opts.dbPath !== ':memory:';
  if (attach) mkdirSync(dirname(opts.dbPath), { recursive: true });
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(
      attach ? ':memory:' : opts.dbPath,
      readOnly
        ? { ...NO_EXTENSION_INSTALLS, access_mode: 'READ_ONLY' }
        : { ...NO_EXTENSION_INSTALLS, checkpoint_threshold: WRITER_CHECKPOINT_THRESHOLD, ...(attach ? { temp_directory: `${opts.dbPath}.tmp` } : {}) },
    );
  } catch (err) {
    throw lockedOr(opts.dbPath, err);
  }
  const connection = await connectUtc(instance);
  if (attach) {
    try {
      await connection.run(`${attachSql(opts.dbPath, opts.rowGroupSize)}; USE ${quoteIdent(catalogName(opts.dbPath))}`);
    } catch (err) {
      connection.closeSync();
      instance.closeSync();
      throw lockedOr(opts.dbPath, err);
    }
  }
  return new DuckDbWarehouse({
    instance,
    connection,
    source: { kind: 'duckdb', path: opts.dbPath, readOnly },
    lakePath: opts.lakePath,
    ...(opts.catalogPath ? { catalogPath: opts.catalogPath } : {}),
    sqlDir: opts.sqlDir ?? findSqlDir(),
    siteTimeZone: opts.siteTimeZone ?? 'UTC',
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(attach ? { reattach: () => reattach(instance, connection, opts.dbPath, opts.rowGroupSize) } : {}),
    ...(readOnly ? {} : { connect: () => connectLike(instance, attach ? opts.dbPath : undefined) }),
  });
}

/**
 * Attaches a writer's file again, as openWarehouse did. DuckDB invalidates an attached database
 * whose checkpoint failed (every later statement on it fails until it is detached); attaching it
 * again replays its write-ahead log, so what was committed before the checkpoint is kept. The
 * invalidated database is the writer connection's default, which DETACH refuses and USE cannot
 * leave: a connection of its own detaches it.
 */
async function reattach(instance: DuckDBInstance, connection: DuckDBConnection, dbPath: string, rowGroups?: number): Promise<void> {
  const name = quoteIdent(catalogName(dbPath));
  const other = await instance.connect();
  try {
    await other.run(`DETACH ${name}; ${attachSql(dbPath, rowGroups)}`);
  } finally {
    other.closeSync();
  }
  await connection.run(`USE ${name}`);
}

/** The writer's ATTACH of its file, under the catalog name and with the writer's row groups. */
function attachSql(dbPath: string, rowGroups?: number): string {
  return `ATTACH ${quoteLiteral(dbPath)} AS ${quoteIdent(catalogName(dbPath))} (ROW_GROUP_SIZE ${rowGroupSize(rowGroups)})`;
}

/** A held file lock as WarehouseLockedError (retryable); anything else as it is. */
function lockedOr(dbPath: string, err: unknown): unknown {
  return isDuckDbLockError(err) ? new WarehouseLockedError(dbPath, { cause: err }) : err;
}

function rowGroupSize(n = WRITER_ROW_GROUP_SIZE): number {
  // DuckDB wants a multiple of its vector size (2,048).
  if (!Number.isSafeInteger(n) || n < 2048 || n % 2048 !== 0) throw new RangeError(`rowGroupSize must be a multiple of 2048, got ${n}`);
  return n;
}

/** DuckDB's name for a file opened directly (its stem), unless that is taken by a built-in catalog. */
export function catalogName(dbPath: string): string {
  const stem = basename(dbPath).replace(/\.[^.]*$/, '');
  return stem === '' || ['memory', 'temp', 'system'].includes(stem.toLowerCase()) ? 'warehouse' : stem;
}

/** Another connection of a writer's instance, in UTC and (for an attached file) using its catalog. */
async function connectLike(instance: DuckDBInstance, attachedPath: string | undefined): Promise<DuckDBConnection> {
  const connection = await instance.connect();
  try {
    await connection.run(`SET TimeZone = 'UTC'${attachedPath ? `; USE ${quoteIdent(catalogName(attachedPath))}` : ''}`);
    return connection;
  } catch (err) {
    connection.closeSync();
    throw err;
  }
}

// Timestamps print and compare in UTC whatever the machine's zone. The first connection: a
// failure closes the instance too.
async function connectUtc(instance: DuckDBInstance): Promise<DuckDBConnection> {
  try {
    return await connectLike(instance, undefined);
  } catch (err) {
    instance.closeSync();
    throw err;
  }
}
