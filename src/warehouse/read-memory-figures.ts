import type { DuckDBConnection } from '@duckdb/node-api';
import { readRows } from './sql-run.js';

/** Where a writer process's memory is, in MB: the V8 heap, Node's buffers, and DuckDB's own accounting. */
export interface MemoryFigures {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** Buffers outside the V8 heap that Node knows of (page bodies, the appender's vectors). */
  externalMb: number;
  /** DuckDB's buffer manager: what counts against its memory_limit. */
  duckdbMb: number;
  /** DuckDB's largest tags (e.g. BASE_TABLE, IN_MEMORY_TABLE, HASH_TABLE), MB each. */
  duckdbTags: Record<string, number>;
  /** Spilled to the temp directory. */
  duckdbTempMb: number;
}

const mb = (bytes: number): number => Math.round(bytes / 1048576);

/**
 * A snapshot of the writer's memory, for the owner's debug log: it tells the V8 heap from DuckDB
 * when a backfill's peak has to be explained (the resident set alone does not).
 */
export async function readMemoryFigures(connection: DuckDBConnection): Promise<MemoryFigures> {
  const rows = await readRows(connection, 'SELECT tag, memory_usage_bytes AS used, temporary_storage_bytes AS temp FROM duckdb_memory()');
  const node = process.memoryUsage();
  const duckdbTags: Record<string, number> = {};
  let used = 0;
  let temp = 0;
  for (const r of rows) {
    used += Number(r.used);
    temp += Number(r.temp);
    if (Number(r.used) >= 1048576) duckdbTags[String(r.tag)] = mb(Number(r.used));
  }
  return { rssMb: mb(node.rss), heapUsedMb: mb(node.heapUsed), heapTotalMb: mb(node.heapTotal), externalMb: mb(node.external), duckdbMb: mb(used), duckdbTags, duckdbTempMb: mb(temp) };
}
