import type { DuckDBConnection } from '@duckdb/node-api';
import { readCount, run } from './sql-run.js';

/** Moves a spool's applied offset forward (never back: a late re-apply of an older batch keeps it). */
export async function advanceAppliedSeq(conn: DuckDBConnection, spoolId: string, seq: number): Promise<void> {
  await run(
    conn,
    `INSERT INTO _webhook_applier (spool_id, applied_seq, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (spool_id) DO UPDATE SET applied_seq = greatest(_webhook_applier.applied_seq, excluded.applied_seq), updated_at = now()`,
    [spoolId, seq],
  );
}

/** The last spool sequence applied for `spoolId` (0 before the first batch). */
export async function readAppliedSeq(conn: DuckDBConnection, spoolId: string): Promise<number> {
  return readCount(conn, 'SELECT applied_seq FROM _webhook_applier WHERE spool_id = $1', [spoolId]);
}
