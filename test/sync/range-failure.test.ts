import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING, type StreamWorkflowInput } from '../../workflows/sync-types.js';
import { withProductionWorkers } from '../helpers/temporal.js';

/**
 * The contacts flow's page ranges when one of them fails for good, on a real Temporal server with
 * the production workers (`runWorkers`) and stand-in warehouse activities: the other ranges
 * must have stopped before the stream reports the failure, so no range loads after it.
 */
describe('a page range that fails for good', () => {
  it('cancels the other ranges and waits for them to stop before the stream fails', { timeout: 60_000 }, async () => {
    const ranges: { fromPage: number; stoppedAt?: number; how?: 'cancelled' | 'completed' }[] = [];
    const runs: string[] = [];
    const warehouseActivities = {
      recordStreamRun: async (input: { status: string }) => {
        runs.push(input.status);
      },
      startContactsRun: async () => ({ plan: { mode: 'backfill', resumeScan: false, maxId: 0, reconcileDue: false } }),
      startContactsScan: async () => ({
        scanKey: 'scan-1',
        mode: 'backfill',
        perPage: 10,
        total: 120,
        lastPage: 12,
        maxIdAtStart: 0,
        crmTotalAtStart: 120,
        crmMaxIdAtStart: 120,
        startedAtMs: 0,
        donePages: [],
        resumed: false,
        requests: 1,
      }),
      syncContactPages: async (input: { fromPage: number; toPage: number }) => {
        const ctx = Context.current();
        if (input.fromPage <= 2 && 2 <= input.toPage) {
          await ctx.sleep(300);
          throw ApplicationFailure.nonRetryable('page 2 cannot be loaded', 'WAREHOUSE_INPUT_INVALID');
        }
        const range: (typeof ranges)[number] = { fromPage: input.fromPage };
        ranges.push(range);
        // Works for up to 10 s, heartbeating; a cancel ends it after 200 ms of settling (its loads).
        const until = Date.now() + 10_000;
        while (Date.now() < until && !ctx.cancellationSignal.aborted) {
          ctx.heartbeat();
          await new Promise((r) => setTimeout(r, 50));
        }
        if (ctx.cancellationSignal.aborted) {
          await new Promise((r) => setTimeout(r, 200));
          Object.assign(range, { stoppedAt: Date.now(), how: 'cancelled' });
          throw new CancelledFailure('range cancelled');
        }
        Object.assign(range, { stoppedAt: Date.now(), how: 'completed' });
        return { pages: 0, rows: 0, pagesLoadedNow: 0, requests: 0, drift: false, inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
      },
    };
    await withProductionWorkers({ warehouseActivities, warehouseConcurrency: 8 }, async ({ client, taskQueue, warehouseTaskQueue }) => {
      const input: StreamWorkflowInput = {
        runId: 'run-1',
        stream: 'contacts',
        full: true,
        reconcile: 'auto',
        reconcileEveryMs: 86_400_000,
        tuning: { ...DEFAULT_TUNING, parallelism: 3, maxPagesPerRange: 2, heartbeatTimeoutMs: 4_000 },
        warehouseTaskQueue,
      };
      const outcome = await client.workflow.execute('syncStreamWorkflow', { taskQueue: taskQueue, workflowId: `stream-${randomUUID()}`, args: [input] }).then(
        () => undefined,
        (err: unknown) => err,
      );
      const reportedAt = Date.now();
      expect(outcome).toBeInstanceOf(WorkflowFailedError);
      expect(String((outcome as WorkflowFailedError).cause?.cause)).toMatch(/page 2 cannot be loaded/);
      // One page per range, three at once: pages 1 and 3 ran beside page 2. Both were cancelled,
      // and both had stopped (settled their loads) before the failure was reported; no range
      // started after it.
      expect(ranges.map((r) => r.fromPage).sort((a, b) => a - b)).toEqual([1, 3]);
      for (const r of ranges) {
        expect(r.how).toBe('cancelled');
        expect(r.stoppedAt).toBeLessThanOrEqual(reportedAt);
      }
      expect(runs).toEqual(['running', 'failed']);
    });
  });
});
