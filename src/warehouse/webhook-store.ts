import type { DuckDBConnection } from '@duckdb/node-api';
import { commitWebhookBatch, type WebhookBatchWrite } from './commit-webhook-batch.js';
import { readContactVersions } from './contact-versions.js';
import { readAppliedSeq } from './webhook-applied-seq.js';
import { listDeadLetters, recordDeadLetters, type DeadLetter, type DeadLetterCursor, type DeadLetterRow } from './webhook-dead-letters.js';

/**
 * The webhook applier's own tables, as named operations: src/webhooks calls these and never sees
 * the connection or a statement.
 */
export interface WebhookStore {
  /** The last spool sequence applied for `spoolId` (0 before the first batch). */
  appliedSeq(spoolId: string): Promise<number>;
  /** Current updated_at (epoch ms) per contact held, to never load an older fetch over it. */
  contactVersions(ids: readonly number[]): Promise<Map<number, number | null>>;
  /** One batch's event rows, dead letters and offset, in one transaction. */
  commitBatch(write: WebhookBatchWrite): Promise<void>;
  /** Unresolved dead letters in spool order (oldest first), after `after` when given. */
  deadLetters(opts?: { limit?: number; after?: DeadLetterCursor }): Promise<DeadLetterRow[]>;
  /** Records (or counts again) deliveries set aside. */
  recordDeadLetters(letters: readonly DeadLetter[], at: Date): Promise<void>;
}

/** `requireWrite` refuses writes on a read-only handle with the error that names the fix. */
export function webhookStoreOver(conn: DuckDBConnection, requireWrite: (operation: string) => void): WebhookStore {
  return {
    appliedSeq: (spoolId) => readAppliedSeq(conn, spoolId),
    contactVersions: (ids) => readContactVersions(conn, ids),
    commitBatch: async (write) => {
      requireWrite('webhooks.commitBatch');
      await commitWebhookBatch(conn, write);
    },
    deadLetters: (opts) => listDeadLetters(conn, opts),
    recordDeadLetters: async (letters, at) => {
      requireWrite('webhooks.recordDeadLetters');
      await recordDeadLetters(conn, letters, at);
    },
  };
}
