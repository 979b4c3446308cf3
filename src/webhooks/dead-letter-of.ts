import type { DeadLetter, DeadLetterReason } from '../warehouse/webhook-dead-letters.js';
import type { SpoolRecord } from './spool-frame.js';

/** The dead letter for a spooled delivery (its raw body kept for a later retry). */
export function deadLetterOf(record: SpoolRecord, reason: DeadLetterReason, error: string): DeadLetter {
  return {
    deliveryId: record.deliveryId,
    spoolSeq: record.seq,
    webhookId: record.webhookId,
    event: record.event,
    known: record.known,
    receivedAt: new Date(record.receivedAt),
    reason,
    error,
    body: record.body,
  };
}
