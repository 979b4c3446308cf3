import type { WarehouseHandle } from '../warehouse/duckdb-warehouse.js';
import type { Warehouse } from '../warehouse/types.js';

/**
 * A warehouse scope as `withWarehouse` gives it: the contract plus the connection, which only
 * src/warehouse functions (the scan log, the webhook applier's tables) use, and the load of
 * contact pages as the CRM sent them.
 */
export type WarehouseSession = Warehouse &
  Pick<WarehouseHandle, 'connection' | 'webhooks' | 'loadContactPages' | 'typeContactPagesAside' | 'loadTypedContactPages' | 'dropTypedContactPages' | 'publishBucketsAside'>;

/** Where sync's writes run: the worker's WarehouseOwner (one job at a time). */
export interface WriteJobs {
  run<T>(job: (w: WarehouseSession) => Promise<T>): Promise<T>;
}
