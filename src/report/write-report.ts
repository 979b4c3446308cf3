import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../logger.js';
import { withCatalog, type WarehouseSource } from '../warehouse/index.js';
import { readWarehouseReport } from '../warehouse/read-warehouse-report.js';
import { renderReport } from './render-report.js';

export interface WriteReportOptions {
  /** The lake's catalog (config.catalogPath). */
  catalogPath: string;
  out: string;
  /** When the report is made (freshness ages count from here). */
  now: Date;
  logger?: Logger;
}

export interface WrittenReport {
  path: string;
  bytes: number;
  source: WarehouseSource;
}

/** Reads the lake's catalog (also while a sync writes), renders the report and writes it atomically. */
export async function writeReport(opts: WriteReportOptions): Promise<WrittenReport> {
  const { data, source } = await withCatalog({ catalogPath: opts.catalogPath, ...(opts.logger ? { logger: opts.logger } : {}) }, async (r) => ({
    data: await readWarehouseReport(r),
    source: r.source,
  }));
  const html = renderReport(data, { now: opts.now, source: describe(source) });
  const path = resolve(opts.out);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, html);
  await rename(tmp, path);
  return { path, bytes: Buffer.byteLength(html), source };
}

function describe(s: WarehouseSource): string {
  return s.kind === 'duckdb' ? `the warehouse ${s.path}` : `the Parquet lake (${s.kind === 'catalog' ? `catalog ${s.path}, ` : ''}published ${s.publishedAt ?? 'at an unknown time'})`;
}
