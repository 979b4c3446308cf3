import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../logger.js';
import { withWarehouse, type WarehouseSource } from '../warehouse/index.js';
import { readWarehouseReport } from '../warehouse/read-warehouse-report.js';
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
    (w) => readWarehouseReport(w),
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
