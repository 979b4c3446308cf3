import type { DuckDBConnection } from '@duckdb/node-api';
import { WarehouseInputError } from './errors.js';
import { readRows, readValue, run } from './sql-run.js';
import type { SyncRunRecord } from './types.js';

const MAX_STATE_BYTES = 1 << 20;

export async function getSyncState<T>(connection: DuckDBConnection, stream: string): Promise<T | null> {
  const value = await readValue(connection, 'SELECT CAST(state AS VARCHAR) FROM _sync_state WHERE stream = $1', [stream]);
  return typeof value === 'string' ? (JSON.parse(value) as T) : null;
}

export async function setSyncState(connection: DuckDBConnection, stream: string, state: Record<string, unknown>): Promise<void> {
  const json = JSON.stringify(state);
  if (json.length > MAX_STATE_BYTES) throw new WarehouseInputError(`Sync state of ${stream} is ${json.length} bytes; keep cursors under ${MAX_STATE_BYTES} bytes.`);
  await run(connection, 'INSERT OR REPLACE INTO _sync_state VALUES ($1, CAST($2 AS JSON), now())', [stream, json]);
}

export async function recordRun(connection: DuckDBConnection, record: SyncRunRecord): Promise<void> {
  await run(connection, `INSERT OR REPLACE INTO _sync_runs VALUES ($1, $2, $3, CAST($4 AS TIMESTAMPTZ), CAST($5 AS TIMESTAMPTZ), $6, $7, $8, $9, $10, $11, $12, $13, $1, now())`, [
    record.runId,
    record.stream,
    record.mode,
    record.startedAt.toISOString(),
    record.finishedAt ? record.finishedAt.toISOString() : null,
    record.status,
    record.pages,
    record.requests,
    record.inserted,
    record.updated,
    record.unchanged,
    record.deleted,
    record.error ? record.error.slice(0, 4000) : null,
  ]);
}

/**
 * What a run's contact loads wrote, read from the history itself: the versions `loadId` opened,
 * each its contact's first (inserted) or a later one (updated). Exact also when an attempt loaded
 * pages and then crashed before it could report them.
 */
export async function contactLoadCounts(connection: DuckDBConnection, loadId: string): Promise<{ inserted: number; updated: number }> {
  const [row] = await readRows(
    connection,
    `SELECT count(*) FILTER (WHERE first) AS inserted, count(*) FILTER (WHERE NOT first) AS updated
     FROM (
       SELECT _load_id, row_number() OVER (PARTITION BY id ORDER BY valid_from, valid_to NULLS LAST) = 1 AS first
       FROM contacts_history WHERE id IN (SELECT id FROM contacts_history WHERE _load_id = $1)
     ) WHERE _load_id = $1`,
    [loadId],
  );
  return { inserted: Number(row?.inserted ?? 0), updated: Number(row?.updated ?? 0) };
}
