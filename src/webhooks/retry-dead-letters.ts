import type { Logger } from '../logger.js';
import type { DeadLetterCursor, DeadLetterRow } from '../warehouse/webhook-dead-letters.js';
import { applyBatch, type ApplierWarehouse } from './apply-batch.js';
import { deadLetterOf } from './dead-letter-of.js';
import type { WebhookRefetcher } from './refetcher.js';
import type { SpoolRecord } from './spool-frame.js';
import { isTransient } from './is-transient.js';

export interface RetryDeadLettersOptions {
  refetcher: WebhookRefetcher;
  withWarehouse: <T>(fn: (w: ApplierWarehouse) => Promise<T>) => Promise<T>;
  concurrency?: number;
  limit?: number;
  /** Start after this letter (the previous part's last), so letters that fail again are not retried twice. */
  after?: DeadLetterCursor;
  /** The site's zone (CRM_TIMEZONE), for zone-less timestamps in payloads. */
  siteTimeZone?: string;
  logger?: Logger;
  now?: () => number;
}

export interface RetryOutcome {
  deliveryId: string;
  spoolSeq: number;
  event: string;
  /** applied: resolved now; failed: still a dead letter (its error updated); deferred: a transient error, try later. */
  outcome: 'applied' | 'failed' | 'deferred';
  error: string | null;
}

const describe = (err: unknown): string => {
  const e = err as { code?: string; name?: string; message?: string };
  return `${e.code ?? e.name ?? 'Error'}: ${String(e.message ?? err).slice(0, 500)}`;
};

/**
 * Applies unresolved dead letters again, one at a time in spool order, through the applier's own
 * batch code (refetch, load, event rows), without touching the spool offset. A delivery that
 * applies is marked resolved; one that fails again keeps its dead letter with the new error.
 */
export async function retryDeadLetters(options: RetryDeadLettersOptions): Promise<RetryOutcome[]> {
  const letters = await options.withWarehouse((w) => w.webhooks.deadLetters({ ...(options.limit !== undefined ? { limit: options.limit } : {}), ...(options.after ? { after: options.after } : {}) }));
  const out: RetryOutcome[] = [];
  for (const d of letters) out.push(await retryOne(d, options));
  return out;
}

async function retryOne(d: DeadLetterRow, options: RetryDeadLettersOptions): Promise<RetryOutcome> {
  const record: SpoolRecord = { deliveryId: d.deliveryId, webhookId: d.webhookId, event: d.event, known: d.known, receivedAt: d.receivedAt.getTime(), body: Buffer.from(d.body), seq: d.spoolSeq };
  try {
    const r = await applyBatch([record], {
      spoolId: 'dead-letters',
      refetcher: options.refetcher,
      withWarehouse: options.withWarehouse,
      lastApplied: new Map(),
      concurrency: options.concurrency ?? 4,
      replay: true,
      ...(options.siteTimeZone ? { siteTimeZone: options.siteTimeZone } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    if (r.failed === 0) return { deliveryId: d.deliveryId, spoolSeq: d.spoolSeq, event: d.event, outcome: 'applied', error: null };
    const again = await options.withWarehouse((w) => w.webhooks.deadLetters()).then((all) => all.find((x) => x.deliveryId === d.deliveryId));
    return { deliveryId: d.deliveryId, spoolSeq: d.spoolSeq, event: d.event, outcome: 'failed', error: again?.error ?? null };
  } catch (err) {
    if (isTransient(err)) return { deliveryId: d.deliveryId, spoolSeq: d.spoolSeq, event: d.event, outcome: 'deferred', error: describe(err) };
    const error = describe(err);
    const at = new Date((options.now ?? Date.now)());
    await options.withWarehouse((w) => w.webhooks.recordDeadLetters([deadLetterOf(record, 'apply_error', error)], at));
    return { deliveryId: d.deliveryId, spoolSeq: d.spoolSeq, event: d.event, outcome: 'failed', error };
  }
}
