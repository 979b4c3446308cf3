import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../logger.js';
import { withWarehouse, type WarehouseSource } from '../warehouse/index.js';
import { useCurrentViews } from '../warehouse/current-views.js';
import { readReportData } from '../warehouse/report-data.js';
import { findSqlDir } from '../warehouse/sql-dir.js';
import { renderReport } from './render-report.js';

export interface WriteReportOptions {
  dbPath: string;
  lakePath: string;
  out: string;
  /** When the report is made (freshness ages count from here). */
  now: Date;
  /** How long to wait for a writer before reading the lake. */
  waitMs?: number;
  logger?: Logger;
}

export interface WrittenReport {
  path: string;
  bytes: number;
  source: WarehouseSource;
}

/** Reads the warehouse (or the lake while a sync writes), renders the report and writes it atomically. */
export async function writeReport(opts: WriteReportOptions): Promise<WrittenReport> {
  let source: WarehouseSource | undefined;
  const data = await withWarehouse(
    { dbPath: opts.dbPath, lakePath: opts.lakePath, write: false, onSource: (s) => (source = s), ...(opts.logger ? { logger: opts.logger } : {}) },
    async (w) => {
      // The file's views are those of the crmsync that last migrated it; read this version's.
      if (w.source.kind === 'duckdb') await useCurrentViews(w.connection, findSqlDir());
      return readReportData(w.connection);
    },
  );
  const html = renderReport(data, { now: opts.now, source: describe(source!) });
  const path = resolve(opts.out);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, html);
  await rename(tmp, path);
  return { path, bytes: Buffer.byteLength(html), source: source! };
}

function describe(s: WarehouseSource): string {
  return s.kind === 'duckdb' ? `the warehouse ${s.path}` : `the Parquet lake ${s.path} (published ${s.publishedAt ?? 'at an unknown time'})`;
}
