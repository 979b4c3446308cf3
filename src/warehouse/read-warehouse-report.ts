import { useCurrentViews } from './current-views.js';
import type { WarehouseHandle } from './duckdb-warehouse.js';
import { readReportData, type ReportData } from './report-data.js';
import { findSqlDir } from './sql-dir.js';

/**
 * The report's data from an open warehouse. A DuckDB file holds the views of the crmsync that last
 * migrated it, so this version's views are used for the read; the lake's views are already current.
 */
export async function readWarehouseReport(w: WarehouseHandle, sqlDir = findSqlDir()): Promise<ReportData> {
  if (w.source.kind === 'duckdb') await useCurrentViews(w.connection, sqlDir);
  return readReportData(w.connection);
}
