import type { DuckDBConnection } from '@duckdb/node-api';
import { LAKE_TABLES } from './lake-layout.js';
import { readLakeManifest, writeLakeManifest } from './lake-manifest.js';
import { publishTable, type PublishContext } from './publish-lake.js';
import { quoteLiteral } from './quote.js';
import { readRows, run } from './sql-run.js';
import { refreshLakeCatalog } from './write-lake-catalog.js';

/** A lake partition: a bucket of a bucketed table. */
interface Part {
  table: string;
  part: string;
}

/** What a publish aside needs of the warehouse besides a connection. */
export type AsideContext = Omit<PublishContext, 'connection' | 'openLane'> & { catalogPath: string; sqlDir: string };

/**
 * Publishes lake buckets on a connection of its own while the writer's connection goes on with
 * its jobs. A bucket publish only reads the committed rows, but on the writer it held every load
 * behind it: CPU-bound, the fetchers then waited for room and one core idled (bench/results/
 * notes.md, "what is left"). `start`, inside a job of the writer, moves the buckets from
 * `_lake_dirty` to `_lake_publishing` and pins the lane's snapshot to that commit, so the lane
 * writes the buckets as they were then, and a load that touches one meanwhile marks it dirty
 * again. The outcome is recorded on the writer (`settle`, before the next publish of either kind):
 * the buckets leave `_lake_publishing`, and go back to `_lake_dirty` when their publish failed.
 * One publish of the lake at a time: every other publish waits for the one aside (`idle`).
 */
export class LakePublishLane {
  readonly #connect: () => Promise<DuckDBConnection>;
  #connection: Promise<DuckDBConnection> | undefined;
  #running: Promise<void> | undefined;
  /** Publishes aside that ended, not yet recorded on the writer. */
  #ended: { parts: Part[]; ok: boolean }[] = [];

  constructor(connect: () => Promise<DuckDBConnection>) {
    this.#connect = connect;
  }

  /** Resolves once no publish runs aside (whatever its outcome: its caller has that). */
  async idle(): Promise<void> {
    await this.#running;
  }

  /** On the writer's connection: records the publishes aside that ended. */
  async settle(writer: DuckDBConnection): Promise<void> {
    const ended = this.#ended.splice(0);
    if (ended.length === 0) return;
    const failed = ended.filter((e) => !e.ok).flatMap((e) => e.parts);
    try {
      await run(writer, 'BEGIN TRANSACTION');
      if (failed.length > 0) await run(writer, `INSERT OR IGNORE INTO _lake_dirty VALUES ${partValues(failed)}`);
      await run(writer, `DELETE FROM _lake_publishing WHERE (table_name, part) IN (${partValues(ended.flatMap((e) => e.parts))})`);
      await run(writer, 'COMMIT');
    } catch (err) {
      await run(writer, 'ROLLBACK').catch(() => undefined);
      this.#ended.unshift(...ended);
      throw err;
    }
  }

  /**
   * Inside a job of the writer (`writer` its connection, nothing else running on it): takes
   * `buckets` of `tables` out of `_lake_dirty` and starts their publish on the lane. Resolves
   * once the publish has started; `done` once it has ended (a failure leaves the buckets to the
   * next publish).
   */
  async start(writer: DuckDBConnection, ctx: AsideContext, tables: readonly string[], buckets: readonly number[]): Promise<{ done: Promise<void> }> {
    await this.idle();
    await this.settle(writer);
    const moved = await moveToPublishing(writer, tables, buckets);
    if (moved.length === 0) return { done: Promise.resolve() };
    let lane: DuckDBConnection;
    try {
      lane = await this.#lane();
      await run(lane, 'BEGIN TRANSACTION');
      // The lane's snapshot of the file is taken at its first read: now, before any later job commits.
      await readRows(lane, 'SELECT count(*) FROM _lake_publishing');
    } catch (err) {
      this.#ended.push({ parts: moved, ok: false });
      throw err;
    }
    const done = publishMoved(lane, ctx, moved).then(
      () => void this.#ended.push({ parts: moved, ok: true }),
      (err: unknown) => {
        this.#ended.push({ parts: moved, ok: false });
        throw err;
      },
    );
    this.#running = done.catch(() => undefined);
    return { done };
  }

  /** Closes the lane once its publish, if any, has ended. */
  async close(): Promise<void> {
    await this.idle();
    const connection = await this.#connection?.catch(() => undefined);
    connection?.closeSync();
  }

  #lane(): Promise<DuckDBConnection> {
    this.#connection ??= this.#connect();
    return this.#connection;
  }
}

/**
 * Puts every bucket left in `_lake_publishing` back in `_lake_dirty`: a process that stopped
 * during a publish aside did not record its outcome. For a writer opening the file.
 */
export async function recoverLakePublishing(writer: DuckDBConnection): Promise<void> {
  // Migrated from another set of files (a test's older sql/), the table may not exist.
  const exists = await readRows(writer, `SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name = '_lake_publishing'`);
  // Nearly always empty: no commit (and no write-ahead log entry) at every open.
  if (exists.length === 0 || (await readRows(writer, 'SELECT 1 FROM _lake_publishing LIMIT 1')).length === 0) return;
  await run(writer, 'BEGIN TRANSACTION');
  try {
    await run(writer, 'INSERT OR IGNORE INTO _lake_dirty SELECT table_name, part FROM _lake_publishing; DELETE FROM _lake_publishing');
    await run(writer, 'COMMIT');
  } catch (err) {
    await run(writer, 'ROLLBACK').catch(() => undefined);
    throw err;
  }
}

function partValues(parts: readonly Part[]): string {
  return parts.map((p) => `(${quoteLiteral(p.table)}, ${quoteLiteral(p.part)})`).join(', ');
}

async function moveToPublishing(writer: DuckDBConnection, tables: readonly string[], buckets: readonly number[]): Promise<Part[]> {
  const bucketed = tables.filter((t) => LAKE_TABLES[t]?.kind === 'bucket');
  if (bucketed.length === 0 || buckets.length === 0) return [];
  const where = `table_name IN (${bucketed.map(quoteLiteral).join(', ')}) AND part IN (${buckets.map((b) => quoteLiteral(String(Math.trunc(b)))).join(', ')})`;
  await run(writer, 'BEGIN TRANSACTION');
  try {
    const rows = await readRows(writer, `SELECT table_name, part FROM _lake_dirty WHERE ${where} ORDER BY ALL`);
    await run(writer, `INSERT OR IGNORE INTO _lake_publishing SELECT table_name, part FROM _lake_dirty WHERE ${where}; DELETE FROM _lake_dirty WHERE ${where}`);
    await run(writer, 'COMMIT');
    return rows.map((r) => ({ table: String(r.table_name), part: String(r.part) }));
  } catch (err) {
    await run(writer, 'ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** On the lane, in its open transaction: publishes the moved parts, then the manifest and catalog. */
async function publishMoved(lane: DuckDBConnection, ctx: AsideContext, moved: readonly Part[]): Promise<void> {
  try {
    const manifest = (await readLakeManifest(ctx.lakePath)) ?? { publishedAt: null, tables: {} };
    const published: string[] = [];
    for (const table of [...new Set(moved.map((p) => p.table))]) {
      const parts = moved.filter((p) => p.table === table).map((p) => p.part);
      if (await publishTable({ ...ctx, connection: lane }, table, LAKE_TABLES[table]!, manifest, new Set([table]), undefined, parts)) published.push(table);
    }
    if (published.length > 0) {
      manifest.publishedAt = new Date().toISOString();
      await writeLakeManifest(ctx.lakePath, manifest);
      ctx.logger?.info({ tables: published }, 'published lake');
    }
    await refreshLakeCatalog({ lakePath: ctx.lakePath, catalogPath: ctx.catalogPath, sqlDir: ctx.sqlDir, siteTimeZone: ctx.siteTimeZone ?? 'UTC', ...(ctx.logger ? { logger: ctx.logger } : {}) });
  } finally {
    await run(lane, 'COMMIT').catch(() => run(lane, 'ROLLBACK').catch(() => undefined));
  }
}
