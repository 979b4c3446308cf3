import type { DuckDBConnection } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/types.js';

/** A warehouse as a write job gets it: the contract plus the connection for sync's own tables. */
export type WarehouseSession = Warehouse & { connection: DuckDBConnection };

/** Where sync's writes run: the worker's WarehouseOwner (one job at a time). */
export interface WriteJobs {
  run<T>(job: (w: WarehouseSession) => Promise<T>): Promise<T>;
}
