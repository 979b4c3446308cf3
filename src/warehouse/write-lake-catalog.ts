import { createHash, randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { z } from 'zod';
import type { Logger } from '../logger.js';
import { NO_EXTENSION_INSTALLS } from './duckdb-extensions.js';
import { BUCKET_COLUMN, LAKE_TABLES, MANIFEST_FILE } from './lake-layout.js';
import { listViewFiles } from './migrate.js';
import { quoteIdent, quoteLiteral } from './quote.js';

export interface WriteLakeCatalogOptions {
  lakePath: string;
  catalogPath: string;
  sqlDir: string;
  /** CRM_TIMEZONE, written into the views that count the CRM's days. */
  siteTimeZone: string;
  logger?: Logger;
}

export interface WrittenCatalog {
  /** Lake tables the catalog has a view of. */
  tables: string[];
  /** Statements of sql/views/ left out because their tables are not in the lake (e.g. the push ledger). */
  skipped: { file: string; reason: string }[];
}

/** A view over each table's manifest entry: when its lake copy was published (`crmsync status` reads it). */
export const FRESHNESS_VIEW = 'lake_freshness';

/**
 * Bump when `writeLakeCatalog` changes what it writes (a view's shape, a new built-in view): a
 * catalog written by an older crmsync is then rewritten at the next publish.
 */
const CATALOG_FORMAT = 1;

/** Beside the catalog: the signature it was written with and the file (inode, mtime) it went into. */
const WrittenCatalogStamp = z.object({ signature: z.string().max(200), ino: z.number(), mtimeMs: z.number() });
type WrittenCatalogStamp = z.infer<typeof WrittenCatalogStamp>;

export function catalogStampFile(catalogPath: string): string {
  return `${catalogPath}.written.json`;
}

async function readStamp(catalogPath: string): Promise<WrittenCatalogStamp | undefined> {
  try {
    const text = await readFile(catalogStampFile(catalogPath), 'utf8');
    if (text.length > 4096) return undefined;
    const parsed = WrittenCatalogStamp.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function writeStamp(catalogPath: string, stamp: WrittenCatalogStamp): Promise<void> {
  const file = catalogStampFile(catalogPath);
  const tmp = `${file}.${randomUUID()}.tmp`;
  await writeFile(tmp, `${JSON.stringify(stamp)}\n`);
  await rename(tmp, file);
}

/**
 * Rewrites the catalog after a publish unless it already holds exactly what it would be written
 * with: its views read through the symlinks, so a publish that only swapped generations changes
 * nothing in it. It is rewritten when a table appears in the lake, sql/views/ changed, the
 * catalog format changed, or the file is not the one the stamp beside it names (missing, or
 * replaced by a publisher that left no stamp). The stamp is a file, not this process's memory:
 * every `crmsync sync` is a new process, and rewriting an unchanged catalog (a DuckDB file whose
 * views bind every table's Parquet files) was a large part of a sync with nothing to do.
 */
export async function refreshLakeCatalog(opts: WriteLakeCatalogOptions): Promise<boolean> {
  const lake = resolve(opts.lakePath);
  const views = listViewFiles(opts.sqlDir, opts.siteTimeZone);
  const signature = createHash('sha256')
    .update(JSON.stringify([CATALOG_FORMAT, lake, Object.keys(LAKE_TABLES).filter((t) => existsSync(join(lake, t))), views]))
    .digest('hex');
  const last = await readStamp(opts.catalogPath);
  const stat = existsSync(opts.catalogPath) ? statSync(opts.catalogPath) : null;
  if (last && stat && last.signature === signature && last.ino === stat.ino && last.mtimeMs === stat.mtimeMs) return false;
  await writeLakeCatalog(opts);
  const now = statSync(opts.catalogPath);
  await writeStamp(opts.catalogPath, { signature, ino: now.ino, mtimeMs: now.mtimeMs });
  return true;
}

/**
 * (Re)writes the catalog: a small DuckDB file holding one view per published lake table, the
 * analyst views and macros of sql/views/, and `lake_freshness`. Built under a temp name, then
 * renamed over the old one, so a reader opening it at any moment gets a whole catalog, and a
 * reader that has the old one open keeps its file (the rename does not touch its inode).
 *
 * How views find files: each reads `<lake>/<table>/**` through the table's symlink (an absolute
 * path), not the generation directory it points at now. The glob is expanded at every query, so
 * a catalog opened before any number of publishes keeps reading the current data, while a view
 * pinned to a generation would break once publishLake prunes it (it keeps KEEP_GENERATIONS).
 * The cost: one query's tables can come from different publishes, as they already could (each
 * table is swapped on its own). A reader needs to reopen the catalog only when a table's columns
 * change (an upgrade's migration): DuckDB refuses a view whose column types changed under it.
 * File names stay stable across generations (publish-lake.ts), so a glob expanded just before a
 * swap still opens its files; only a swap that drops a file (an id range emptied by deletes, an
 * append table's compaction) can fail a query racing it once, with a missing file: rerun it.
 */
export async function writeLakeCatalog(opts: WriteLakeCatalogOptions): Promise<WrittenCatalog> {
  const lake = resolve(opts.lakePath);
  await mkdir(dirname(opts.catalogPath), { recursive: true });
  const tmp = join(dirname(opts.catalogPath), `.${basename(opts.catalogPath)}.${randomUUID()}.tmp`);
  try {
    const instance = await DuckDBInstance.create(tmp, NO_EXTENSION_INSTALLS);
    let written: WrittenCatalog;
    try {
      const connection = await instance.connect();
      try {
        written = await defineViews(connection, lake, opts.sqlDir, opts.siteTimeZone);
        await connection.run('CHECKPOINT');
      } finally {
        connection.closeSync();
      }
    } finally {
      instance.closeSync();
    }
    await rename(tmp, opts.catalogPath);
    opts.logger?.debug({ catalog: opts.catalogPath, tables: written.tables.length, skipped: written.skipped.length }, 'wrote lake catalog');
    return written;
  } finally {
    await rm(tmp, { force: true });
    await rm(`${tmp}.wal`, { force: true });
  }
}

async function defineViews(connection: DuckDBConnection, lake: string, sqlDir: string, siteTimeZone: string): Promise<WrittenCatalog> {
  const tables: string[] = [];
  for (const [table, layout] of Object.entries(LAKE_TABLES)) {
    if (!existsSync(join(lake, table))) continue;
    const glob = quoteLiteral(join(lake, table, '**', '*.parquet'));
    const select = layout.kind === 'bucket' ? `SELECT * EXCLUDE (${BUCKET_COLUMN}) FROM read_parquet(${glob}, hive_partitioning = true)` : `SELECT * FROM read_parquet(${glob})`;
    await connection.run(`CREATE VIEW ${quoteIdent(table)} AS ${select}`);
    tables.push(table);
  }
  await connection.run(
    `CREATE VIEW ${FRESHNESS_VIEW} AS
     SELECT t.key AS table_name, CAST(t.value->>'publishedAt' AS TIMESTAMPTZ) AS published_at,
       CAST(t.value->>'rows' AS BIGINT) AS rows, CAST(t.value->>'generation' AS INTEGER) AS generation
     FROM read_json_objects(${quoteLiteral(join(lake, MANIFEST_FILE))}) m, json_each(m.json->'tables') t`,
  );
  // One statement at a time: a file may define several views, and only those over tables the
  // lake does not carry (the push ledger, the dead letters) are left out.
  const skipped: WrittenCatalog['skipped'] = [];
  for (const v of listViewFiles(sqlDir, siteTimeZone)) {
    const statements = await connection.extractStatements(v.sql);
    for (let i = 0; i < statements.count; i++) {
      try {
        await (await statements.prepare(i)).run();
      } catch (err) {
        skipped.push({ file: v.name, reason: err instanceof Error ? err.message.split('\n')[0]! : String(err) });
      }
    }
  }
  return { tables, skipped };
}
