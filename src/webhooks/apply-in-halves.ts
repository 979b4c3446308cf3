import type { Logger } from '../logger.js';
import { applyBatch, type ApplyBatchDeps, type ApplyBatchResult } from './apply-batch.js';
import { deadLetterOf } from './dead-letter-of.js';
import { isTransient } from './is-transient.js';
import type { SpoolRecord } from './spool-frame.js';

/**
 * Applies `records` in order. A failure that waiting may cure (`retryable`: the CRM or the
 * warehouse busy or down) is thrown, for the caller's retry owner (Temporal) to try the whole
 * range again: nothing is skipped, so events keep their order. Any other failure is about the
 * deliveries: the range is split in halves, in order, until the delivery that fails is applied
 * alone; that one goes to `webhook_dead_letters` with its error (a data rule, not a retry).
 */
export async function applyInHalves(records: readonly SpoolRecord[], deps: ApplyBatchDeps, signal?: AbortSignal): Promise<ApplyBatchResult[]> {
  try {
    return [await applyBatch([...records], deps)];
  } catch (err) {
    if (signal?.aborted || isTransient(err)) throw err;
    if (records.length === 1) return [await deadLetterDelivery(records[0]!, err, deps)];
    const half = Math.ceil(records.length / 2);
    deps.logger?.warn({ code: (err as { code?: string }).code, deliveries: records.length, nextBatch: half }, 'a webhook batch failed; applying it in smaller parts to find the delivery that fails');
    const first = await applyInHalves(records.slice(0, half), deps, signal);
    return [...first, ...(await applyInHalves(records.slice(half), deps, signal))];
  }
}

/** One transaction: the dead letter, a failed webhook_events row (no payload: it may be the cause), the offset. */
export async function deadLetterDelivery(record: SpoolRecord, err: unknown, deps: Pick<ApplyBatchDeps, 'spoolId' | 'withWarehouse' | 'now'> & { logger?: Logger }): Promise<ApplyBatchResult> {
  const e = err as { code?: string; name?: string; message?: string };
  const error = `${e.code ?? e.name ?? 'Error'}: ${String(e.message ?? err).slice(0, 500)}`;
  const at = new Date((deps.now ?? Date.now)());
  await deps.withWarehouse((w) =>
    w.webhooks.commitBatch({
      spoolId: deps.spoolId,
      appliedSeq: record.seq,
      loadId: `webhooks-${deps.spoolId.slice(0, 8)}-dead-${record.seq}`,
      syncedAt: at,
      webhookEvents: [
        {
          delivery_id: record.deliveryId,
          event: record.event,
          webhook_id: record.webhookId,
          received_at: new Date(record.receivedAt).toISOString(),
          event_at: new Date(record.receivedAt).toISOString(),
          known_event: record.known,
          spool_seq: record.seq,
          payload: null,
          status: 'failed',
          error,
          applied_at: at.toISOString(),
        },
      ],
      deadLetters: [deadLetterOf(record, 'apply_error', error)],
      emailEvents: [],
      commerceEvents: [],
      contactMarks: [],
    }),
  );
  deps.logger?.warn({ delivery: record.deliveryId, seq: record.seq, event: record.event, error }, 'a webhook delivery cannot be applied; set aside in webhook_dead_letters');
  return { appliedSeq: record.seq, events: 1, contactsLoaded: 0, contactsTombstoned: 0, refetches: 0, skippedLate: 0, failed: 1, failedIds: [record.deliveryId], fetchMs: 0, writeMs: 0 };
}
