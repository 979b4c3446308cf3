export { openWarehouse, type OpenWarehouseOptions } from './open-warehouse.js';
export { withWarehouse, type WithWarehouseOptions } from './with-warehouse.js';
export { openWarehouseOwner, type WarehouseOwner, type WarehouseOwnerOptions } from './warehouse-owner.js';
export { withCatalog, type WithCatalogOptions } from './with-catalog.js';
export { writeLakeCatalog } from './write-lake-catalog.js';
export { readLakeFreshness, type TableFreshness } from './read-lake-freshness.js';
export type { WarehouseHandle, WarehouseSource } from './duckdb-warehouse.js';
export type { ContactPage, ContactPagesStats } from './load-contact-pages.js';
export {
  CatalogNotFoundError,
  WarehouseLockedError,
  WarehouseOwnedError,
  WarehouseOwnerClosedError,
  WarehouseReadOnlyError,
  WarehouseInputError,
  WarehousePageUnreadableError,
  WarehouseQueryError,
  MigrationError,
} from './errors.js';
export { migrate, listMigrations } from './migrate.js';
export { reportTableFor, REPORT_TABLES, type ReportTable } from './report-snapshots.js';
export { LAKE_TABLES } from './lake-layout.js';
export { readLakeManifest, type LakeManifest } from './lake-manifest.js';
export { quoteIdent, quoteLiteral } from './quote.js';
export type * from './types.js';
