import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../src/logger.js';
import type { ApplierWarehouse, ApplyBatchResult } from '../src/webhooks/apply-batch.js';
import { applyInHalves } from '../src/webhooks/apply-in-halves.js';
import type { WebhookRefetcher } from '../src/webhooks/refetcher.js';
import { retryDeadLetters } from '../src/webhooks/retry-dead-letters.js';
import type { SpoolRangeReader } from '../src/webhooks/spool-range-reader.js';
import { LAKE_TABLES } from '../src/warehouse/lake-layout.js';
import type { Warehouse } from '../src/warehouse/types.js';
import type { ApplySpoolInput, ApplySpoolResult, RetryDeadLettersInput, RetryDeadLettersResult, WebhookActivities } from '../workflows/webhook-apply-types.js';
import { currentActivity } from './sync-deps.js';
import { withFailureClassification } from './to-application-failure.js';

export interface WebhookActivityDeps {
  /** The DuckDB file's owner: each batch's writes are one job. */
  writes: { run<T>(job: (w: ApplierWarehouse & Pick<Warehouse, 'publishLake'>) => Promise<T>): Promise<T> };
  spool: SpoolRangeReader;
  refetcher: WebhookRefetcher;
  logger: Logger;
  /** Concurrent refetches; the CRM client's limiter paces them further. */
  concurrency?: number;
  /** Publish the changed tables to the lake at most this often (0: never; default 5 min). */
  publishEveryMs?: number;
  /** The site's zone (CRM_TIMEZONE), for zone-less timestamps in payloads; default UTC. */
  siteTimeZone?: string;
  /** How often a waiting activity looks at the spool again. */
  pollMs?: number;
  now?: () => number;
}

/** Tables an apply or a dead-letter retry changes; those the lake layout knows are published. */
const APPLIED_TABLES = [
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

/** Bodies may be up to the receiver's limit each: a range is bounded by bytes too. */
const MAX_RANGE_BYTES = 32 * 1024 * 1024;

/** The apply activity of webhookApplyWorkflow and the dead-letter retry, for the warehouse queue. */
export function createWebhookActivities(deps: WebhookActivityDeps): WebhookActivities {
  const now = deps.now ?? Date.now;
  // Per contact, when its last applied refetch started: lets late deliveries skip a refetch.
  const lastApplied = new Map<number, number>();
  const publishEveryMs = deps.publishEveryMs ?? 300_000;
  let lastPublish = now();
  // Applied since the last publish: an idle call publishes it once due, so the last batch before a
  // quiet spell reaches the lake too (not only when a later batch comes).
  let unpublished = false;
  // A failed publish is logged and retried at the next interval; it never holds back applying.
  const publish = (): Promise<boolean> =>
    deps.writes
      .run((w) => w.publishLake(APPLIED_TABLES.filter((t) => t in LAKE_TABLES)))
      .then(() => true)
      .catch((err: unknown) => {
        deps.logger.warn({ code: (err as { code?: string }).code, message: (err as Error).message }, 'publishing the lake after webhook batches failed');
        return false;
      });
  const publishIfDue = async (): Promise<void> => {
    if (!unpublished || publishEveryMs <= 0 || now() - lastPublish < publishEveryMs) return;
    lastPublish = now();
    unpublished = false;
    // Still unpublished after a failure, so an idle call retries it when the next interval is up.
    if (!(await publish())) unpublished = true;
  };
  return withFailureClassification({
    async applyWebhookSpool(input: ApplySpoolInput): Promise<ApplySpoolResult> {
      const ctx = currentActivity();
      const signal = ctx?.cancellationSignal;
      const deadline = now() + input.waitMs;
      const empty = (spoolId: string | null, appliedSeq: number): ApplySpoolResult => ({ spoolId, appliedSeq, events: 0, deadLettered: 0, contactsLoaded: 0, refetches: 0 });
      const spoolId = await deps.spool.id();
      if (!spoolId) {
        await pause(Math.max(0, deadline - now()), signal);
        return empty(null, 0);
      }
      const after = await deps.writes.run((w) => w.webhooks.appliedSeq(spoolId));
      let records = await deps.spool.read(after, input.batchSize, MAX_RANGE_BYTES);
      while (records.length === 0 && now() < deadline && !signal?.aborted) {
        ctx?.heartbeat({ appliedSeq: after });
        await pause(Math.min(deps.pollMs ?? 200, deadline - now()), signal);
        records = await deps.spool.read(after, input.batchSize, MAX_RANGE_BYTES);
      }
      if (records.length === 0) {
        await publishIfDue();
        return empty(spoolId, after);
      }
      const beat = setInterval(() => ctx?.heartbeat({ appliedSeq: after, deliveries: records.length }), 1_000);
      let results: ApplyBatchResult[];
      try {
        results = await applyInHalves(
          records,
          {
            spoolId,
            refetcher: deps.refetcher,
            withWarehouse: (fn) => deps.writes.run(fn),
            lastApplied,
            concurrency: deps.concurrency ?? 8,
            ...(deps.siteTimeZone ? { siteTimeZone: deps.siteTimeZone } : {}),
            logger: deps.logger,
            now,
          },
          signal,
        );
      } finally {
        clearInterval(beat);
      }
      unpublished = true;
      await publishIfDue();
      const sum = (f: (r: ApplyBatchResult) => number) => results.reduce((n, r) => n + f(r), 0);
      return {
        spoolId,
        appliedSeq: Math.max(after, ...results.map((r) => r.appliedSeq)),
        events: sum((r) => r.events),
        deadLettered: sum((r) => r.failed),
        contactsLoaded: sum((r) => r.contactsLoaded),
        refetches: sum((r) => r.refetches),
      };
    },

    /** Refetches outside the owner's jobs; each letter's writes are one job, like a spool batch. */
    async retryWebhookDeadLetters(input: RetryDeadLettersInput): Promise<RetryDeadLettersResult> {
      const outcomes = await retryDeadLetters({
        refetcher: deps.refetcher,
        withWarehouse: (fn) => deps.writes.run(fn),
        concurrency: deps.concurrency ?? 8,
        limit: input.limit,
        ...(input.after ? { after: input.after } : {}),
        ...(deps.siteTimeZone ? { siteTimeZone: deps.siteTimeZone } : {}),
        logger: deps.logger,
        now,
      });
      // The user runs the listing next: it reads the lake, so publish what the retry changed.
      if (outcomes.length > 0) await publish();
      return { outcomes };
    },
  });
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
}
