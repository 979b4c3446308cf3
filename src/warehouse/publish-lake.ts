import { link, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import pLimit from 'p-limit';
import type { Logger } from '../logger.js';
import { WarehouseInputError } from './errors.js';
import { BUCKET_COLUMN, CATALOG_FILE, GENERATIONS_DIR, LAKE_TABLES, MAX_APPEND_FILES, lakeSelectSql, type LakeLayout } from './lake-layout.js';
import { lakeCompressionOptions, type LakeCompression } from './lake-compression.js';
import { countParquetFiles, currentGeneration, listParquet, pruneGenerations, swapSymlink } from './lake-generations.js';
import { readLakeManifest, writeLakeManifest, type LakeManifest } from './lake-manifest.js';
import { quoteIdent, quoteLiteral } from './quote.js';
import { findSqlDir } from './sql-dir.js';
import { readCount } from './sql-run.js';
import type { WholeTableMarks } from './whole-table-marks.js';
import { refreshLakeCatalog } from './write-lake-catalog.js';

/** Bucket directories linked into a new generation at once. */
const LINK_CONCURRENCY = 16;
/** The bucket size of lakes whose manifest does not say (crmsync before the lake recorded it). */
const LEGACY_BUCKET_SIZE = 50_000;
/**
 * A rewritten file's name carries its generation: a reader that listed a table's files through
 * the symlink just before a swap and opens one after it must not get the next generation's file
 * under the same name (its footer read from one file and its pages from the other came out as
 * corrupt-data errors). It finds the file gone instead, a plain missing-file error that crmsync's
 * own readers retry (withCatalog). Clean buckets are hard links and keep their names and content.
 */
const generationFile = (generation: number): string => `data-${String(generation).padStart(6, '0')}.parquet`;
/**
 * Rows per Parquet row group in the lake's files, not DuckDB's 122,880: the writer buffers a
 * whole row group (with the raw JSON, a large share of the memory limit) before it compresses,
 * which under the sync's memory limit spilled and made the publish slower. Each step down (to
 * 20,000, then 5,000) made a bucket's COPY faster for files barely larger. DuckDB closes a group
 * at the first chunk of rows that takes it to this size or past it, so 5,000 wrote groups of
 * 6,144 rows and 2,048 writes 2,048-4,095: the same COPY time, and a quarter less of the memory
 * the COPY holds outside DuckDB's own count while a backfill's publish runs beside its loads.
 * Smaller groups also give readers finer zone maps. Figures: bench/results/notes.md,
 * "publish-lake", "row groups of 5,000" and "the lake's row groups and the 1M peak";
 * bench/lake-row-groups.ts.
 */
export const LAKE_ROW_GROUP_SIZE = 2_048;
const PARQUET_OPTIONS = `FORMAT parquet, ROW_GROUP_SIZE ${LAKE_ROW_GROUP_SIZE}`;
/**
 * zstd at its default level, not DuckDB's default snappy: the contact files (mostly the raw JSON)
 * come out 2.5 times smaller for a publish that costs about a fifth more CPU, a few tenths of a
 * second per 100,000 contacts; zstd at level 1 gave files an eighth larger for CPU within the
 * noise (bench/lake-compression.ts; bench/results/notes.md, "h19d").
 */
export const DEFAULT_LAKE_COMPRESSION: LakeCompression = 'zstd';

export interface PublishContext {
  connection: DuckDBConnection;
  lakePath: string;
  /** The readers' catalog, rewritten after a publish (default `<lake>/catalog.duckdb`). */
  catalogPath?: string;
  /** Where the analyst views come from (default: the project's sql/). */
  sqlDir?: string;
  /** CRM_TIMEZONE, for the views that count the CRM's days (default UTC). */
  siteTimeZone?: string;
  logger?: Logger;
  /**
   * The writer's knowledge of which whole tables are unchanged since their publish: those are
   * skipped without hashing. Without it every whole table is hashed.
   */
  marks?: WholeTableMarks;
  /** The Parquet compression of the files written (default DEFAULT_LAKE_COMPRESSION). */
  compression?: LakeCompression;
  /**
   * Opens another connection to the same database, for a publish in two lanes; the caller closes
   * it. Without it every publish runs in one lane.
   */
  openLane?: () => Promise<DuckDBConnection>;
}

export interface PublishOptions {
  /**
   * Publish only these id buckets of the bucketed tables (the other dirty buckets stay dirty for
   * a later publish). Lets a long scan publish the ranges it has finished while it runs, so the
   * publish at its end has only the last ones left.
   */
  buckets?: readonly number[];
  /**
   * Publish only a lake that has never been published (no manifest): its tables, empty or not,
   * and the catalog. A worker does this as it starts, so the lake is readable before the first
   * sync ends and that sync's last publish writes only what it changed.
   */
  onlyIfNew?: boolean;
  /**
   * 2: `contacts` on the writer's connection while the other bucketed and append tables with
   * changes are written on a second connection at the same time. For publishes when nothing else
   * wants the cores (a scan's pages all loaded): the two lanes take about two thirds of the time
   * of one for the same CPU, but beside a running scan they only compete with its loads
   * (bench/results/notes.md, "two lanes at the scan's end").
   */
  lanes?: 1 | 2;
}

/** Rows of duckdb_tables() and duckdb_views() in the file's own catalog and schema. */
const MAIN = `database_name = current_database() AND schema_name = 'main'`;

/**
 * Publishes changed tables to `<lake>/<table>/`. Each publish of a table builds a new
 * generation directory (unchanged files hard-linked from the previous one, changed ones written
 * fresh) and then atomically swaps the `<lake>/<table>` symlink to it: a reader sees the old
 * generation or the new one, never a half-written file or a mix.
 */
export async function publishLake(ctx: PublishContext, tables?: readonly string[], options: PublishOptions = {}): Promise<string[]> {
  const unknown = (tables ?? []).filter((t) => !LAKE_TABLES[t]);
  if (unknown.length > 0) {
    throw new WarehouseInputError(`publishLake: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not lake tables; use some of ${Object.keys(LAKE_TABLES).join(', ')}.`);
  }
  const found = await readLakeManifest(ctx.lakePath);
  if (found && options.onlyIfNew) return [];
  const existing = new Set(
    // Views too: contacts_history is one (its closed versions' table and the open ones on contacts).
    (await ctx.connection.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE ${MAIN} UNION ALL SELECT view_name FROM duckdb_views() WHERE ${MAIN} AND NOT internal`))
      .getRows()
      .map((r) => String(r[0])),
  );
  const wanted = (tables ?? Object.keys(LAKE_TABLES)).filter((t) => existing.has(t));
  await mkdir(join(ctx.lakePath, GENERATIONS_DIR), { recursive: true });
  const manifest: LakeManifest = found ?? { publishedAt: null, tables: {} };
  // The tables with dirty parts, asked once: a bucketed or append table without any, already
  // published, needs no statement of its own.
  const dirtyTables = new Set((await ctx.connection.runAndReadAll('SELECT DISTINCT table_name FROM _lake_dirty')).getRows().map((r) => String(r[0])));
  const published = await publishTables(ctx, wanted, manifest, dirtyTables, options);
  if (published.length > 0) {
    manifest.publishedAt = new Date().toISOString();
    await writeLakeManifest(ctx.lakePath, manifest);
    for (const t of published) ctx.marks?.published(t);
    ctx.logger?.info({ tables: published }, 'published lake');
  }
  // After every publish, also one that published nothing (a lake from before catalogs existed
  // gets one); refreshLakeCatalog skips the write when the catalog would come out the same.
  const catalogPath = ctx.catalogPath ?? join(ctx.lakePath, CATALOG_FILE);
  await refreshLakeCatalog({ lakePath: ctx.lakePath, catalogPath, sqlDir: ctx.sqlDir ?? findSqlDir(), siteTimeZone: ctx.siteTimeZone ?? 'UTC', ...(ctx.logger ? { logger: ctx.logger } : {}) });
  return published;
}

/**
 * Publishes `wanted` in order on the writer's connection or, with `lanes: 2` and two tables with
 * dirty parts to write, the second of those and any after it on a connection of their own at the
 * same time. A table the second lane fails to write (it may run out of the memory the two share)
 * is written again on the writer's connection once the first lane is done. Returns the tables
 * published, in `wanted`'s order.
 */
async function publishTables(ctx: PublishContext, wanted: readonly string[], manifest: LakeManifest, dirtyTables: ReadonlySet<string>, options: PublishOptions): Promise<string[]> {
  const done = new Set<string>();
  const run = async (c: PublishContext, tables: readonly string[]): Promise<void> => {
    for (const table of tables) if (await publishTable(c, table, LAKE_TABLES[table]!, manifest, dirtyTables, options.buckets)) done.add(table);
  };
  const writing = wanted.filter((t) => LAKE_TABLES[t]!.kind !== 'whole' && dirtyTables.has(t));
  const second = options.lanes === 2 && ctx.openLane && writing.length >= 2 ? new Set(writing.slice(1)) : new Set<string>();
  if (second.size === 0) {
    await run(ctx, wanted);
  } else {
    const lane = await ctx.openLane!();
    ctx.logger?.debug({ second: [...second] }, 'lake: publishing in two lanes');
    let failed: unknown;
    try {
      const [first, other] = await Promise.allSettled([
        run(
          ctx,
          wanted.filter((t) => !second.has(t)),
        ),
        run({ ...ctx, connection: lane }, [...second]),
      ]);
      if (first.status === 'rejected') throw first.reason;
      if (other.status === 'rejected') failed = other.reason;
    } finally {
      lane.closeSync();
    }
    if (failed !== undefined) {
      const left = [...second].filter((t) => !done.has(t));
      ctx.logger?.warn({ tables: left, err: failed instanceof Error ? failed.message : String(failed) }, 'lake: the second publish lane failed; writing its tables on the writer connection');
      await run(ctx, left);
    }
  }
  return wanted.filter((t) => done.has(t));
}

/**
 * Publishes one table's dirty parts (`buckets`: only those) as a new generation. `moved`: the
 * parts to write are these, taken out of `_lake_dirty` already (a publish aside,
 * publish-aside.ts), so none is read from it or deleted in it here.
 */
export async function publishTable(
  ctx: PublishContext,
  table: string,
  layout: LakeLayout,
  manifest: LakeManifest,
  dirtyTables: ReadonlySet<string>,
  buckets?: readonly number[],
  moved?: readonly string[],
): Promise<boolean> {
  const { connection } = ctx;
  const found = await currentGeneration(ctx.lakePath, table);
  // A generation written with another bucket size (an older crmsync's) cannot lend its files to
  // this one: the table is rewritten whole in the current layout, once.
  const relaid = found?.dir != null && layout.kind === 'bucket' && (manifest.tables[table]?.bucketSize ?? LEGACY_BUCKET_SIZE) !== layout.size;
  const current = found && relaid ? { generation: found.generation, dir: null } : found;
  if (relaid) ctx.logger?.info({ table, bucketSize: layout.size }, 'lake: rewriting the table in the current id ranges, once (an earlier crmsync wrote other ones)');
  // Nothing written to it through this writer since it was hashed or published: no scan, and no
  // statement at all (most of a sync's closing publish is such tables).
  if (layout.kind === 'whole' && current?.dir && manifest.tables[table]?.contentHash && ctx.marks?.isClean(table)) return false;
  if (layout.kind !== 'whole' && current?.dir && !dirtyTables.has(table)) return false;
  const t = quoteIdent(table);
  // A bucket filter applies to bucketed tables that already have a generation to link the other
  // buckets from; anything else is published whole, as without a filter.
  const only = buckets && layout.kind === 'bucket' && current?.dir ? ` AND part IN (${buckets.map((b) => quoteLiteral(String(Math.trunc(b)))).join(', ') || 'NULL'})` : '';
  const parts = moved ? `(VALUES ${moved.map((p) => `(${quoteLiteral(p)})`).join(', ') || '(NULL)'}) v(part) WHERE part IS NOT NULL` : `_lake_dirty WHERE table_name = ${quoteLiteral(table)}${only}`;
  await connection.run(`CREATE OR REPLACE TEMP TABLE _publish_dirty AS SELECT part FROM ${parts}`);
  const dirtyCount = await readCount(connection, 'SELECT count(*) FROM _publish_dirty');
  let contentHash: string | undefined;
  if (layout.kind === 'whole') {
    contentHash = await tableHash(connection, table);
    if (current?.dir && manifest.tables[table]?.contentHash === contentHash) {
      ctx.marks?.published(table);
      return false;
    }
  } else if (current?.dir && dirtyCount === 0) {
    return false;
  }

  const generation = (current?.generation ?? 0) + 1;
  const genDir = join(ctx.lakePath, GENERATIONS_DIR, table, String(generation).padStart(6, '0'));
  await rm(genDir, { recursive: true, force: true });
  await mkdir(genDir, { recursive: true });
  const file = `part-${String(generation).padStart(6, '0')}.parquet`;

  if (layout.kind === 'whole') {
    await copyTo(ctx, `SELECT * FROM ${t}`, join(genDir, generationFile(generation)));
  } else if (layout.kind === 'append') {
    const previous = current?.dir ? await listParquet(current.dir) : [];
    if (!current?.dir || previous.length + 1 > MAX_APPEND_FILES) {
      await copyTo(ctx, `SELECT * FROM ${t}`, join(genDir, `compacted-${file}`));
    } else {
      for (const f of previous) await link(join(current.dir, f), join(genDir, f));
      await copyTo(ctx, `SELECT * FROM ${t} WHERE ${quoteIdent(layout.column)} IN (SELECT part FROM _publish_dirty)`, join(genDir, file));
    }
  } else {
    await publishBuckets(ctx, table, layout, current?.dir ?? null, genDir, generationFile(generation));
  }

  await swapSymlink(ctx.lakePath, table, genDir);
  if (!moved) await connection.run(`DELETE FROM _lake_dirty WHERE table_name = ${quoteLiteral(table)} AND part IN (SELECT part FROM _publish_dirty)`);
  const files = await countParquetFiles(genDir);
  const rows = await readCount(connection, `SELECT count(*) FROM ${t}`);
  manifest.tables[table] = {
    generation,
    publishedAt: new Date().toISOString(),
    rows,
    files,
    ...(contentHash ? { contentHash } : {}),
    ...(layout.kind === 'bucket' ? { bucketSize: layout.size } : {}),
  };
  await pruneGenerations(join(ctx.lakePath, GENERATIONS_DIR, table), generation);
  // Clean once the manifest naming this generation is written (publishLake, below): a failure
  // before that leaves the table to be hashed again.
  return true;
}

/**
 * Writes each dirty bucket with its own COPY (a range predicate, so zone maps skip the rest of
 * the table) and hard-links the clean ones from the previous generation. One COPY per bucket
 * rather than one partitioned COPY: that one keeps a writer and a row group open for every
 * bucket at once, which grows with the table and ran out of memory under a low limit
 * (bench/results/notes.md, "publish-lake").
 */
async function publishBuckets(ctx: PublishContext, table: string, layout: Extract<LakeLayout, { kind: 'bucket' }>, previousDir: string | null, genDir: string, file: string): Promise<void> {
  const { connection } = ctx;
  const column = quoteIdent(layout.column);
  const dirty = new Set((await connection.runAndReadAll('SELECT part FROM _publish_dirty')).getRows().map((r) => `${BUCKET_COLUMN}=${String(r[0])}`));
  if (previousDir) {
    // Over a hundred directories a table at a million contacts, three calls each, at a disk's
    // pace for metadata: several at a time (bench/results/notes.md, "smaller lake buckets").
    const limit = pLimit(LINK_CONCURRENCY);
    const clean = (await readdir(previousDir)).filter((part) => !dirty.has(part) && part.startsWith(`${BUCKET_COLUMN}=`));
    await Promise.all(
      clean.map((part) =>
        limit(async () => {
          await mkdir(join(genDir, part));
          for (const f of await listParquet(join(previousDir, part))) await link(join(previousDir, part, f), join(genDir, part, f));
        }),
      ),
    );
  }
  // The buckets to write that still hold rows (a dirty bucket whose rows were all deleted is
  // simply left out of the new generation).
  const buckets = previousDir ? await dirtyBucketsWithRows(connection, table, layout, dirty) : await allBuckets(connection, table, layout);
  for (const b of buckets) {
    const dir = join(genDir, `${BUCKET_COLUMN}=${b}`);
    await mkdir(dir, { recursive: true });
    const lo = b * layout.size;
    await copyTo(ctx, `${lakeSelectSql(table)} WHERE ${column} >= ${lo} AND ${column} < ${lo + layout.size}`, join(dir, file));
  }
  // Readers need at least one file to learn the schema of an empty table.
  if ((await readdir(genDir)).length === 0) {
    await mkdir(join(genDir, `${BUCKET_COLUMN}=0`));
    await copyTo(ctx, `${lakeSelectSql(table)} LIMIT 0`, join(genDir, `${BUCKET_COLUMN}=0`, `empty-${file}`));
  }
}

/**
 * The dirty buckets that hold rows, each asked with its own range predicate, which zone maps
 * answer from a few row groups. Not one `DISTINCT col // size` filtered on the bucket: that
 * reads the whole table on every publish, and a backfill publishes a few buckets at a time, so
 * its publishes grew with the square of the table (bench/results/backfill.json, "h18").
 */
async function dirtyBucketsWithRows(connection: DuckDBConnection, table: string, layout: Extract<LakeLayout, { kind: 'bucket' }>, dirty: ReadonlySet<string>): Promise<number[]> {
  const column = quoteIdent(layout.column);
  const parts = [...dirty].map((d) => Number(d.slice(BUCKET_COLUMN.length + 1))).filter((b) => Number.isSafeInteger(b) && b >= 0);
  const buckets: number[] = [];
  for (const b of parts.sort((x, y) => x - y)) {
    const lo = b * layout.size;
    if ((await readCount(connection, `SELECT count(*) FROM (SELECT 1 FROM ${quoteIdent(table)} WHERE ${column} >= ${lo} AND ${column} < ${lo + layout.size} LIMIT 1)`)) > 0) buckets.push(b);
  }
  return buckets;
}

/** Every bucket that holds rows (a first publish, or a rewrite of a table whose generation is gone). */
async function allBuckets(connection: DuckDBConnection, table: string, layout: Extract<LakeLayout, { kind: 'bucket' }>): Promise<number[]> {
  const column = quoteIdent(layout.column);
  return (await connection.runAndReadAll(`SELECT DISTINCT ${column} // ${layout.size} AS b FROM ${quoteIdent(table)} ORDER BY b`)).getRows().map((r) => Number(r[0]));
}

async function copyTo(ctx: PublishContext, select: string, path: string): Promise<void> {
  await ctx.connection.run(`COPY (${select}) TO ${quoteLiteral(path)} (${PARQUET_OPTIONS}, ${lakeCompressionOptions(ctx.compression ?? DEFAULT_LAKE_COMPRESSION)})`);
}

async function tableHash(connection: DuckDBConnection, table: string): Promise<string> {
  const reader = await connection.runAndReadAll(`SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM ${quoteIdent(table)} t`);
  const row = reader.getRows()[0] ?? [];
  return `${String(row[0])}:${String(row[1])}`;
}
