import type { DuckDBConnection } from '@duckdb/node-api';
import { WarehouseInputError } from './errors.js';
import type { SyncRunRecord } from './types.js';

const MAX_STATE_BYTES = 1 << 20;

export async function getSyncState<T>(connection: DuckDBConnection, stream: string): Promise<T | null> {
  const reader = await connection.runAndReadAll('SELECT CAST(state AS VARCHAR) FROM _sync_state WHERE stream = $1', [stream]);
  const value = reader.getRows()[0]?.[0];
  return typeof value === 'string' ? (JSON.parse(value) as T) : null;
}

export async function setSyncState(connection: DuckDBConnection, stream: string, state: Record<string, unknown>): Promise<void> {
  const json = JSON.stringify(state);
  if (json.length > MAX_STATE_BYTES) throw new WarehouseInputError(`Sync state of ${stream} is ${json.length} bytes; keep cursors under ${MAX_STATE_BYTES} bytes.`);
  await connection.run('INSERT OR REPLACE INTO _sync_state VALUES ($1, CAST($2 AS JSON), now())', [stream, json]);
}

export async function recordRun(connection: DuckDBConnection, run: SyncRunRecord): Promise<void> {
  await connection.run(
    `INSERT OR REPLACE INTO _sync_runs VALUES ($1, $2, $3, CAST($4 AS TIMESTAMPTZ), CAST($5 AS TIMESTAMPTZ), $6, $7, $8, $9, $10, $11, $12, $13, $1, now())`,
    [
      run.runId,
      run.stream,
      run.mode,
      run.startedAt.toISOString(),
      run.finishedAt ? run.finishedAt.toISOString() : null,
      run.status,
      run.pages,
      run.requests,
      run.inserted,
      run.updated,
      run.unchanged,
      run.deleted,
      run.error ? run.error.slice(0, 4000) : null,
    ],
  );
}
