import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '../logger.js';
import { MigrationError } from './errors.js';
import { quoteLiteral } from './quote.js';
import { readRows, run } from './sql-run.js';

const MIGRATION_FILE = /^(\d{3})_[\w-]+\.sql$/;

// The ledger must exist before any numbered file can be recorded in it.
const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS _migrations (
  version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, checksum VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL
)`;

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(sqlDir: string): MigrationFile[] {
  return readdirSync(sqlDir)
    .filter((f) => MIGRATION_FILE.test(f))
    .sort()
    .map((name) => {
      const sql = readFileSync(join(sqlDir, name), 'utf8');
      return { version: Number(name.slice(0, 3)), name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Written in view SQL where the site's time zone goes (sql/views/000_site_date.sql). */
export const SITE_TIME_ZONE_TOKEN = '{{site_time_zone}}';

/**
 * The files of `sql/views/`, in order, with the site's time zone (CRM_TIMEZONE) written where
 * they ask for it: the days analysts count by are the CRM's days, whatever zone reads them.
 */
export function listViewFiles(sqlDir: string, siteTimeZone: string): { name: string; sql: string }[] {
  const dir = join(sqlDir, 'views');
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
  } catch {
    return [];
  }
  const zone = siteTimeZone.replaceAll("'", "''");
  return names.map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8').replaceAll(SITE_TIME_ZONE_TOKEN, zone) }));
}

/**
 * Applies each numbered file of `sql/` once (each in its own transaction, recorded in
 * `_migrations`), then re-applies every file of `sql/views/` (CREATE OR REPLACE), so running it
 * twice changes nothing. Returns the names of the migrations applied now.
 */
export async function migrate(connection: DuckDBConnection, opts: { sqlDir: string; siteTimeZone: string; logger?: Logger }): Promise<string[]> {
  await run(connection, CREATE_LEDGER);
  const rows = await readRows(connection, 'SELECT version, checksum FROM _migrations');
  const applied = new Map(rows.map((r) => [Number(r.version), String(r.checksum)]));
  const done: string[] = [];
  for (const m of listMigrations(opts.sqlDir)) {
    const previous = applied.get(m.version);
    if (previous !== undefined) {
      if (previous !== m.checksum) {
        opts.logger?.warn({ migration: m.name }, 'applied migration was edited since; add a new numbered file instead');
      }
      continue;
    }
    await run(connection, 'BEGIN TRANSACTION');
    try {
      await run(connection, m.sql);
      await run(connection, `INSERT INTO _migrations VALUES (${m.version}, ${quoteLiteral(m.name)}, ${quoteLiteral(m.checksum)}, now())`);
      await run(connection, 'COMMIT');
    } catch (err) {
      await run(connection, 'ROLLBACK').catch(() => undefined);
      throw new MigrationError(m.name, { cause: err });
    }
    done.push(m.name);
    opts.logger?.info({ migration: m.name }, 'applied migration');
  }
  await applyViews(connection, opts.sqlDir, opts.siteTimeZone);
  // Migrations change tables' shapes, which DuckDB replays from its write-ahead log less surely
  // than it replays rows: a checkpoint now leaves nothing of them to replay after a crash. One
  // that cannot run (another transaction is open) leaves the log as it would have been.
  if (done.length > 0) await run(connection, 'CHECKPOINT').catch(() => undefined);
  return done;
}

export async function applyViews(connection: DuckDBConnection, sqlDir: string, siteTimeZone: string): Promise<void> {
  for (const v of listViewFiles(sqlDir, siteTimeZone)) {
    try {
      await run(connection, v.sql);
    } catch (err) {
      throw new MigrationError(`views/${v.name}`, { cause: err });
    }
  }
}
