import type { WarehouseHandle } from './duckdb-warehouse.js';
import { readReportData, type ReportData } from './report-data.js';

/** The report's data from a reader of the lake's catalog (its views are this version's). */
export async function readWarehouseReport(r: WarehouseHandle): Promise<ReportData> {
  return readReportData(r.connection);
}
