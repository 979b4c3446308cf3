import type { WarehouseHandle } from '../warehouse/duckdb-warehouse.js';
import type { Warehouse } from '../warehouse/types.js';

/**
 * A warehouse scope as `withWarehouse` gives it: the contract plus the connection, which only
 * src/warehouse functions (the scan log, the webhook applier's tables) use.
 */
export type WarehouseSession = Warehouse & Pick<WarehouseHandle, 'connection'>;

/** Opens the warehouse for the duration of `fn` (the writer holds the DuckDB file only inside it). */
export type OpenWarehouse = <T>(write: boolean, fn: (w: WarehouseSession) => Promise<T>) => Promise<T>;
