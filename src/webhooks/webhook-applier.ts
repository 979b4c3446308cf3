import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.js';
import { applyBatch, type ApplierWarehouse, type ApplyBatchResult } from './apply-batch.js';
import { deadLetterDelivery } from './apply-in-halves.js';
import { isTransient } from './is-transient.js';
import type { SpoolRecord } from './spool-frame.js';
import type { WebhookRefetcher } from './refetcher.js';
import type { Spool } from './spool.js';
import type { WebhookMetrics } from './webhook-metrics.js';
import { LAKE_TABLES } from '../warehouse/lake-layout.js';
import type { Warehouse } from '../warehouse/types.js';

/** What the applier's write scopes offer: the batch writes, migrations, and the lake publish. */
export type WebhookWarehouse = ApplierWarehouse & Pick<Warehouse, 'migrate' | 'publishLake'>;

/** Tables the applier changes; those the lake layout knows are published. */
export const APPLIER_LAKE_TABLES = [
  'contacts',
  'contacts_history',
  'contact_tags',
  'contact_lists',
  'campaigns',
  'funnels',
  'funnel_subscribers',
  'webhook_events',
  'webhook_dead_letters',
  'email_events',
  'commerce_events',
] as const;

export interface WebhookApplierOptions {
  spool: Spool;
  spoolId: string;
  refetcher: WebhookRefetcher;
  /** Opens a write scope (the warehouse lock is held only inside it, so the sync worker gets turns). */
  withWarehouse: <T>(fn: (w: WebhookWarehouse) => Promise<T>) => Promise<T>;
  metrics?: WebhookMetrics;
  logger?: Logger;
  /** Deliveries per warehouse scope. */
  batchSize?: number;
  /** Wait this long for a batch to fill before applying a partial one (fewer, larger scopes). */
  lingerMs?: number;
  /** Concurrent refetches; the CRM client's rate limiter paces them further. */
  concurrency?: number;
  /** Publish the changed tables to the Parquet lake at most this often (0: never; default 5 min). */
  publishEveryMs?: number;
  now?: () => number;
}

export interface ApplierStatus {
  appliedSeq: number;
  batches: number;
  consecutiveFailures: number;
  lastError: string | null;
  lastBatch: ApplyBatchResult | null;
  /** Deliveries set aside in webhook_dead_letters since start (failed alone, or unreadable). */
  deadLettered: number;
}

export interface WebhookApplier {
  start(): void;
  /** Resolves once every delivery up to `seq` (default: all durable now) is applied; false on timeout. */
  waitApplied(seq?: number, timeoutMs?: number): Promise<boolean>;
  status(): ApplierStatus;
  stop(): Promise<void>;
}

/**
 * An in-process applier, for tests and bench/webhooks-apply.ts that drive a receiver and a
 * warehouse in one process. `crmsync webhooks serve` applies through webhookApplyWorkflow and its
 * activity on the warehouse worker instead (Temporal retries there; the data rule is shared,
 * apply-in-halves.ts).
 *
 * Drains the spool into the warehouse in batches, in order. A transient failure retries the same
 * batch with backoff (nothing is skipped, so events keep their order). Any other failure splits
 * the batch in halves until the delivery that fails is applied alone; that one goes to
 * `webhook_dead_letters` with the error, and the applier moves on.
 */
export function createWebhookApplier(options: WebhookApplierOptions): WebhookApplier {
  const { spool, logger, metrics } = options;
  // Large batches amortize the write scope (open, migrate check, checkpoint; its cost:
  // bench/results/notes.md, "write scope"); a
  // batch is only as large as the backlog, so a quiet stream still applies within the linger time.
  const batchSize = options.batchSize ?? 2_000;
  const lingerMs = options.lingerMs ?? 100;
  const lastApplied = new Map<number, number>();
  const publishEveryMs = options.publishEveryMs ?? 300_000;
  let lastPublish = Date.now();
  let unpublished = false;
  const abort = new AbortController();
  let cursor: number | undefined;
  let running: Promise<void> | undefined;
  const status: ApplierStatus = { appliedSeq: 0, batches: 0, consecutiveFailures: 0, lastError: null, lastBatch: null, deadLettered: 0 };
  // Isolation: after a failed batch, read at most `limit` deliveries until past `isolateUntil`.
  let limit = batchSize;
  let isolateUntil = 0;

  const deadLetter = async (record: SpoolRecord, err: unknown): Promise<void> => {
    await deadLetterDelivery(record, err, { spoolId: options.spoolId, withWarehouse: options.withWarehouse, ...(options.now ? { now: options.now } : {}), ...(logger ? { logger } : {}) });
  };

  const init = async (): Promise<number> =>
    options.withWarehouse(async (w) => {
      await w.migrate();
      return w.webhooks.appliedSeq(options.spoolId);
    });

  // A failed publish is logged and retried at the next interval; it never holds back applying.
  const publish = async (): Promise<void> => {
    lastPublish = Date.now();
    try {
      await options.withWarehouse((w) => w.publishLake(APPLIER_LAKE_TABLES.filter((t) => t in LAKE_TABLES)));
      unpublished = false;
    } catch (err) {
      logger?.warn({ code: (err as { code?: string }).code, message: (err as Error).message }, 'publishing the lake after webhook batches failed');
    }
  };

  const pause = (ms: number): Promise<void> => sleep(ms, undefined, { signal: abort.signal }).catch(() => undefined);

  const loop = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        if (cursor === undefined) {
          cursor = await init();
          status.appliedSeq = cursor;
          await spool.markApplied(cursor);
        }
        if (!(await spool.waitFor(cursor, 500))) continue;
        if (lingerMs > 0 && spool.stats().committedSeq - cursor < batchSize) await pause(lingerMs);
        // Bodies may be up to the receiver's limit each: bound the batch by bytes too.
        const records = await spool.read(cursor, limit, 32 * 1024 * 1024);
        if (records.length === 0) continue;
        let result: ApplyBatchResult;
        try {
          result = await applyBatch(records, {
            spoolId: options.spoolId,
            refetcher: options.refetcher,
            withWarehouse: options.withWarehouse,
            lastApplied,
            concurrency: options.concurrency ?? 8,
            ...(logger ? { logger } : {}),
            ...(options.now ? { now: options.now } : {}),
          });
        } catch (err) {
          if (abort.signal.aborted || isTransient(err)) throw err;
          if (records.length > 1) {
            isolateUntil = Math.max(isolateUntil, records.at(-1)!.seq);
            limit = Math.ceil(records.length / 2);
            logger?.warn(
              { code: (err as { code?: string }).code, deliveries: records.length, nextBatch: limit },
              'a webhook batch failed; applying it in smaller parts to find the delivery that fails',
            );
            continue;
          }
          // Alone, it still fails for a reason waiting will not change. If even recording that
          // fails, the warehouse itself is the problem: that error is retried with backoff.
          await deadLetter(records[0]!, err);
          result = {
            appliedSeq: records[0]!.seq,
            events: 1,
            contactsLoaded: 0,
            contactsTombstoned: 0,
            refetches: 0,
            skippedLate: 0,
            failed: 1,
            failedIds: [records[0]!.deliveryId],
            fetchMs: 0,
            writeMs: 0,
          };
        }
        if (result.appliedSeq >= isolateUntil) limit = batchSize;
        status.deadLettered += result.failed;
        cursor = result.appliedSeq;
        status.appliedSeq = cursor;
        status.batches++;
        status.lastBatch = result;
        status.consecutiveFailures = 0;
        status.lastError = null;
        metrics?.countApplied('events', result.events);
        metrics?.countApplied('contacts_loaded', result.contactsLoaded);
        metrics?.countApplied('contacts_tombstoned', result.contactsTombstoned);
        metrics?.countApplied('refetches', result.refetches);
        metrics?.countApplied('skipped_late', result.skippedLate);
        metrics?.countApplied('failed', result.failed);
        logger?.debug({ appliedSeq: cursor, events: result.events, refetches: result.refetches }, 'webhook batch applied');
        await spool.markApplied(cursor);
        unpublished = true;
        if (publishEveryMs > 0 && Date.now() - lastPublish >= publishEveryMs) await publish();
      } catch (err) {
        if (abort.signal.aborted) break;
        status.consecutiveFailures++;
        const e = err as { code?: string; message?: string; retryAfterMs?: number };
        status.lastError = `${e.code ?? 'ERROR'}: ${e.message ?? String(err)}`;
        const delay = Math.max(e.retryAfterMs ?? 0, Math.min(60_000, 250 * 2 ** Math.min(status.consecutiveFailures, 8)));
        logger?.warn({ code: e.code, attempt: status.consecutiveFailures, retryInMs: delay }, 'applying webhook batch failed; retrying');
        await pause(delay);
      }
    }
  };

  return {
    start() {
      running ??= loop();
    },
    async waitApplied(seq, timeoutMs = 30_000) {
      const target = seq ?? spool.stats().committedSeq;
      const deadline = Date.now() + timeoutMs;
      while (status.appliedSeq < target) {
        if (Date.now() > deadline || abort.signal.aborted) return false;
        await sleep(20);
      }
      return true;
    },
    status: () => ({ ...status }),
    async stop() {
      abort.abort();
      await running;
      if (unpublished && publishEveryMs > 0) await publish();
    },
  };
}
