import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { Logger } from '../src/logger.js';
import { planPush as planPushRows } from '../src/push/plan-push.js';
import type { PushCrm } from '../src/push/push-crm.js';
import { PushPlanMissingError } from '../src/push/push-errors.js';
import { PushLedger } from '../src/warehouse/push-ledger-store.js';
import { PushPlanStore } from '../src/warehouse/push-plan-store.js';
import { PushAbortedError, sendBatch, type BatchProgress } from '../src/push/send-batch.js';
import type { WarehouseQuery } from '../src/warehouse/types.js';
import type { FinishPushInput, PlanPushInput, PlanPushResult, PushActivities, PushBatchInput, PushBatchResult } from '../workflows/push-types.js';
import { withFailureClassification } from './to-application-failure.js';

export interface PushActivityDeps {
  crm: PushCrm;
  /**
   * The warehouse. On a worker each statement is one job on the WarehouseOwner: the plan and the
   * ledger are written between HTTP calls, never holding the file across one.
   */
  db: WarehouseQuery;
  /** Publishes the ledger to the lake (readers see push_dead_letters through the catalog); a job on the owner. */
  publishLedger?: () => Promise<void>;
  logger: Logger;
  /** Rows in progress at once (default DEFAULT_PUSH_CONCURRENCY); the client's limiter sets the pace. */
  concurrency?: number;
  now?: () => Date;
}

/** Push activities for the warehouse queue: they read the plan and write the ledger. */
export function createPushActivities(deps: PushActivityDeps): PushActivities {
  const now = deps.now ?? (() => new Date());
  return withFailureClassification({
    async planPush(input: PlanPushInput): Promise<PlanPushResult> {
      // Reading and checking a large source takes a while: heartbeat so it is not taken for dead.
      const summary = await withHeartbeats(
        () => ({ phase: 'planning' }),
        () => planPushRows({ crm: deps.crm, db: deps.db, now }, { from: input.from, ledgerName: input.ledgerName, runId: input.runId, createMissing: input.createMissing, dryRun: false }),
      );
      deps.logger.info({ runId: input.runId, source: summary.source, counts: summary.counts }, 'push planned');
      return {
        runId: summary.runId,
        source: summary.source,
        rowsRead: summary.rowsRead,
        counts: summary.counts,
        toSend: summary.toSend,
        createdTags: summary.createdTags.length,
        createdLists: summary.createdLists.length,
      };
    },

    async pushBatch(input: PushBatchInput): Promise<PushBatchResult> {
      const ctx = currentContext();
      const resumedFrom = ctx?.info.heartbeatDetails as BatchProgress | undefined;
      if (resumedFrom) deps.logger.info({ runId: input.runId, fromSeq: input.fromSeq, resumedFrom }, 'resuming push batch');
      let progress: BatchProgress | undefined;
      // Heartbeats on a timer, with the latest progress: a row waiting out a long Retry-After must
      // not look like a dead worker.
      const details = () => progress ?? { done: 0, total: input.toSeq - input.fromSeq, lastSeq: input.fromSeq - 1 };
      const db = deps.db;
      const send = async () => {
        const rows = await new PushPlanStore(db).load(input.runId, input.fromSeq, input.toSeq);
        if (rows.length === 0 && input.fromSeq < input.toSeq) throw new PushPlanMissingError(input.runId);
        const result = await sendBatch(
          { crm: deps.crm, ledger: new PushLedger(db), now },
          {
            source: input.source,
            runId: input.runId,
            rows,
            concurrency: deps.concurrency,
            signal: ctx?.cancellationSignal,
            deadline: Date.now() + input.maxMs,
            onProgress: (p) => {
              progress = p;
            },
          },
        );
        return {
          sent: result.sent,
          succeeded: result.succeeded,
          failed: result.failed,
          skipped: result.skipped,
          nextSeq: result.nextSeq,
          ...(result.resumeAfterMs !== undefined ? { resumeAfterMs: result.resumeAfterMs } : {}),
        };
      };
      try {
        return await withHeartbeats(details, send);
      } catch (err) {
        // Cancelled: the rows in flight finished and are in the ledger. Reported as a cancellation,
        // not a failure, so the workflow records the run as cancelled.
        if (err instanceof PushAbortedError && ctx?.cancellationSignal.aborted) throw new CancelledFailure(err.message);
        throw err;
      }
    },

    async finishPush(input: FinishPushInput): Promise<void> {
      // Waiting behind a sync's write jobs counts as alive.
      await withHeartbeats(
        () => ({ phase: 'finishing' }),
        async () => {
          const plans = new PushPlanStore(deps.db);
          await plans.finishRun(input.runId, input.status, input.totals, now(), input.error);
          // A failed run keeps its plan for inspection until pruned; a finished one has no use for it.
          if (input.status === 'succeeded') await plans.delete(input.runId);
          // A failed publish leaves the push as it is: the next publish (a sync's, the next push's) carries the ledger.
          await deps.publishLedger?.().catch((err: unknown) => deps.logger.warn({ err }, 'publishing the push ledger to the lake failed'));
        },
      );
      deps.logger.info({ runId: input.runId, status: input.status, totals: input.totals }, 'push finished');
    },
  });
}

/** Heartbeats `details()` now and every second while `fn` runs (no-op outside a worker). */
async function withHeartbeats<T>(details: () => unknown, fn: () => Promise<T>): Promise<T> {
  const ctx = currentContext();
  if (!ctx) return await fn();
  ctx.heartbeat(details());
  const timer = setInterval(() => ctx.heartbeat(details()), 1000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
