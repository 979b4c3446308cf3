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
  // Aggregates rather than a window over the versions: at a million contacts 0.13 s, and they spill.
  // `<=`: a version opened on a contact whose last one began later than the load's clock (its
  // updated_at ahead) begins when that one did, not after it.
  const [row] = await readRows(
    connection,
    `WITH mine AS (SELECT id, min(valid_from) AS since, count(*) AS versions FROM contacts_history WHERE _load_id = $1 GROUP BY id),
     held AS (SELECT DISTINCT h.id FROM contacts_history h JOIN mine m USING (id) WHERE h._load_id <> $1 AND h.valid_from <= m.since)
     SELECT count(*) - (SELECT count(*) FROM held) AS inserted, coalesce(sum(versions), 0) AS versions FROM mine`,
    [loadId],
  );
  const inserted = Number(row?.inserted ?? 0);
  return { inserted, updated: Number(row?.versions ?? 0) - inserted };
}
