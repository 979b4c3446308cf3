import type { DuckDBConnection } from '@duckdb/node-api';
import { readRows, run } from './sql-run.js';

/** Why a delivery was set aside: its body, the record it names, or applying it alone failed. */
export type DeadLetterReason = 'unreadable' | 'record_error' | 'apply_error';

export interface DeadLetter {
  deliveryId: string;
  spoolSeq: number;
  webhookId: number;
  event: string;
  known: boolean;
  receivedAt: Date;
  reason: DeadLetterReason;
  error: string;
  body: Uint8Array;
}

export interface DeadLetterRow extends DeadLetter {
  firstFailedAt: Date;
  lastFailedAt: Date;
  attempts: number;
}

const UPSERT = `INSERT INTO webhook_dead_letters
    (delivery_id, spool_seq, webhook_id, event, known_event, received_at, reason, error, body, first_failed_at, last_failed_at, attempts, resolved_at)
  VALUES ($1, $2, $3, $4, $5, $6::TIMESTAMPTZ, $7, $8, from_base64($9), $10::TIMESTAMPTZ, $10::TIMESTAMPTZ, 1, NULL)
  ON CONFLICT (delivery_id) DO UPDATE SET
    reason = excluded.reason, error = excluded.error, last_failed_at = excluded.last_failed_at,
    attempts = webhook_dead_letters.attempts + 1, resolved_at = NULL`;

/** Records (or, for one already there, counts again) deliveries set aside; call inside the caller's transaction. */
export async function recordDeadLetters(conn: DuckDBConnection, letters: readonly DeadLetter[], at: Date): Promise<void> {
  for (const d of letters) {
    await run(conn, UPSERT, [
      d.deliveryId,
      d.spoolSeq,
      d.webhookId,
      d.event,
      d.known,
      d.receivedAt.toISOString(),
      d.reason,
      d.error.slice(0, 2000),
      Buffer.from(d.body).toString('base64'),
      at.toISOString(),
    ]);
  }
}

/** Marks deliveries applied after all (a retry succeeded). */
export async function resolveDeadLetters(conn: DuckDBConnection, deliveryIds: readonly string[], at: Date): Promise<void> {
  if (deliveryIds.length === 0) return;
  await run(
    conn,
    `UPDATE webhook_dead_letters SET resolved_at = $2::TIMESTAMPTZ
      WHERE resolved_at IS NULL AND delivery_id IN (SELECT unnest(from_json($1::JSON, '["VARCHAR"]')))`,
    [JSON.stringify(deliveryIds), at.toISOString()],
  );
}

/** Where a listing stopped: the next one starts after this letter (letters that fail again stay unresolved). */
export interface DeadLetterCursor {
  spoolSeq: number;
  deliveryId: string;
}

/** Unresolved dead letters in spool order (oldest first), after `after` when given. */
export async function listDeadLetters(conn: DuckDBConnection, opts: { limit?: number; after?: DeadLetterCursor } = {}): Promise<DeadLetterRow[]> {
  const rows = await readRows(
    conn,
    `SELECT delivery_id, spool_seq, webhook_id, event, known_event, epoch_ms(received_at) AS received_ms, reason, error,
            to_base64(body) AS body64, epoch_ms(first_failed_at) AS first_ms, epoch_ms(last_failed_at) AS last_ms, attempts
       FROM webhook_dead_letters
      WHERE resolved_at IS NULL AND (spool_seq > $2 OR (spool_seq = $2 AND delivery_id > $3))
      ORDER BY spool_seq, delivery_id LIMIT $1`,
    [opts.limit ?? 1_000_000, opts.after?.spoolSeq ?? -1, opts.after?.deliveryId ?? ''],
  );
  return rows.map((row) => ({
    deliveryId: String(row.delivery_id),
    spoolSeq: Number(row.spool_seq),
    webhookId: Number(row.webhook_id),
    event: String(row.event),
    known: Boolean(row.known_event),
    receivedAt: new Date(Number(row.received_ms)),
    reason: String(row.reason) as DeadLetterReason,
    error: String(row.error ?? ''),
    body: Buffer.from(String(row.body64 ?? ''), 'base64'),
    firstFailedAt: new Date(Number(row.first_ms)),
    lastFailedAt: new Date(Number(row.last_ms)),
    attempts: Number(row.attempts),
  }));
}
