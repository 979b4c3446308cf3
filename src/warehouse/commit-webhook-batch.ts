import type { DuckDBConnection } from '@duckdb/node-api';
import type { CommerceEventRow, EmailEventRow, WebhookEventRow } from '../webhooks/event-rows.js';
import { inTransaction, run } from './sql-run.js';
import { advanceAppliedSeq } from './webhook-applied-seq.js';
import { recordDeadLetters, resolveDeadLetters, type DeadLetter } from './webhook-dead-letters.js';

/**
 * Batch writes of the webhook applier's own tables. Each batch travels as one JSON parameter
 * unnested in SQL (one statement per table, no row-by-row INSERT); `ON CONFLICT DO NOTHING` on the
 * delivery id makes a re-applied batch (after a crash before the offset commit) change nothing.
 */
const insertFromJson = (table: string, columns: Record<string, string>, casts: Record<string, string>): string => {
  const names = Object.keys(columns);
  const structure = JSON.stringify(Object.fromEntries(names.map((n) => [n, columns[n]])));
  const select = names.map((n) => (casts[n] ? `${n}::${casts[n]}` : n)).join(', ');
  return `INSERT INTO ${table} (${names.join(', ')}, _load_id, _synced_at)
    SELECT ${select}, $2, $3::TIMESTAMPTZ FROM (SELECT unnest(from_json($1::JSON, '[${structure}]'), recursive := true))
    ON CONFLICT DO NOTHING`;
};

const WEBHOOK_EVENTS_SQL = insertFromJson(
  'webhook_events',
  {
    delivery_id: 'VARCHAR',
    event: 'VARCHAR',
    webhook_id: 'BIGINT',
    received_at: 'VARCHAR',
    event_at: 'VARCHAR',
    known_event: 'BOOLEAN',
    spool_seq: 'BIGINT',
    payload: 'VARCHAR',
    status: 'VARCHAR',
    error: 'VARCHAR',
    applied_at: 'VARCHAR',
  },
  { received_at: 'TIMESTAMPTZ', event_at: 'TIMESTAMPTZ', payload: 'JSON', applied_at: 'TIMESTAMPTZ' },
);

const EMAIL_EVENTS_SQL = insertFromJson(
  'email_events',
  {
    delivery_id: 'VARCHAR',
    event: 'VARCHAR',
    email_id: 'BIGINT',
    contact_id: 'BIGINT',
    campaign_id: 'BIGINT',
    subject: 'VARCHAR',
    url: 'VARCHAR',
    occurred_at: 'VARCHAR',
    opened_at: 'VARCHAR',
    data: 'VARCHAR',
  },
  { occurred_at: 'TIMESTAMPTZ', opened_at: 'TIMESTAMPTZ', data: 'JSON' },
);

const COMMERCE_EVENTS_SQL = insertFromJson(
  'commerce_events',
  { delivery_id: 'VARCHAR', event: 'VARCHAR', contact_id: 'BIGINT', order_id: 'VARCHAR', amount: 'DOUBLE', currency: 'VARCHAR', occurred_at: 'VARCHAR', data: 'VARCHAR' },
  { occurred_at: 'TIMESTAMPTZ', data: 'JSON' },
);

export interface ContactEventMark {
  contact_id: number;
  last_event_at: string;
  last_delivery_id: string;
  deleted_event_at: string | null;
}

const CONTACT_MARKS_SQL = `INSERT INTO _webhook_contact_events (contact_id, last_event_at, last_delivery_id, deleted_event_at)
  SELECT contact_id, last_event_at::TIMESTAMPTZ, last_delivery_id, deleted_event_at::TIMESTAMPTZ
  FROM (SELECT unnest(from_json($1::JSON, '[{"contact_id":"BIGINT","last_event_at":"VARCHAR","last_delivery_id":"VARCHAR","deleted_event_at":"VARCHAR"}]'), recursive := true))
  ON CONFLICT (contact_id) DO UPDATE SET
    last_event_at = greatest(_webhook_contact_events.last_event_at, excluded.last_event_at),
    last_delivery_id = CASE WHEN excluded.last_event_at >= _webhook_contact_events.last_event_at THEN excluded.last_delivery_id ELSE _webhook_contact_events.last_delivery_id END,
    deleted_event_at = coalesce(_webhook_contact_events.deleted_event_at, excluded.deleted_event_at)`;

export interface WebhookBatchWrite {
  spoolId: string;
  /** Null when re-applying dead letters: the offset does not move. */
  appliedSeq: number | null;
  /** Replace the deliveries' earlier webhook_events rows, and resolve dead letters that applied now. */
  replaceEvents?: boolean;
  deadLetters?: DeadLetter[];
  loadId: string;
  syncedAt: Date;
  webhookEvents: WebhookEventRow[];
  emailEvents: EmailEventRow[];
  commerceEvents: CommerceEventRow[];
  contactMarks: ContactEventMark[];
}

/** Writes one batch's rows and the new offset in a single transaction. */
export async function commitWebhookBatch(conn: DuckDBConnection, w: WebhookBatchWrite): Promise<void> {
  const synced = w.syncedAt.toISOString();
  await inTransaction(conn, async () => {
    if (w.replaceEvents && w.webhookEvents.length) {
      await run(conn, `DELETE FROM webhook_events WHERE delivery_id IN (SELECT unnest(from_json($1::JSON, '["VARCHAR"]')))`, [JSON.stringify(w.webhookEvents.map((e) => e.delivery_id))]);
    }
    if (w.webhookEvents.length) await run(conn, WEBHOOK_EVENTS_SQL, [JSON.stringify(w.webhookEvents), w.loadId, synced]);
    if (w.emailEvents.length) await run(conn, EMAIL_EVENTS_SQL, [JSON.stringify(w.emailEvents), w.loadId, synced]);
    if (w.commerceEvents.length) await run(conn, COMMERCE_EVENTS_SQL, [JSON.stringify(w.commerceEvents), w.loadId, synced]);
    if (w.contactMarks.length) await run(conn, CONTACT_MARKS_SQL, [JSON.stringify(w.contactMarks)]);
    if (w.deadLetters?.length) await recordDeadLetters(conn, w.deadLetters, w.syncedAt);
    if (w.replaceEvents) {
      const dead = new Set(w.deadLetters?.map((d) => d.deliveryId));
      await resolveDeadLetters(
        conn,
        w.webhookEvents.map((e) => e.delivery_id).filter((id) => !dead.has(id)),
        w.syncedAt,
      );
    }
    if (w.appliedSeq !== null) await advanceAppliedSeq(conn, w.spoolId, w.appliedSeq);
  });
}
