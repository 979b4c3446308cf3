import type { DuckDBConnection } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/types.js';

/** A warehouse scope as `withWarehouse` gives it: the contract plus the connection for sync's own tables. */
export type WarehouseSession = Warehouse & { connection: DuckDBConnection };

/** Opens the warehouse for the duration of `fn` (the writer holds the DuckDB file only inside it). */
export type OpenWarehouse = <T>(write: boolean, fn: (w: WarehouseSession) => Promise<T>) => Promise<T>;
