import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING, type StreamResult, type StreamWorkflowInput } from '../../workflows/sync-types.js';
import { withProductionWorkers } from '../helpers/temporal.js';

/**
 * The funnel_subscribers stream on a real Temporal server with the production workers and
 * stand-in warehouse activities. One funnel after another, their round trips were most of a sync
 * with nothing to do; now a few load at once, and every funnel still loads exactly once.
 */
describe('funnel_subscribers', () => {
  it('loads several funnels at once, each exactly once, and sums their counts', { timeout: 90_000 }, async () => {
    const ids = [11, 12, 13, 14, 15, 16, 17];
    const loaded: number[] = [];
    let inFlight = 0;
    let mostAtOnce = 0;
    // The first funnel holds until a second one has started (or the others are done, which only
    // one-at-a-time code reaches): no clock decides the outcome.
    let secondStarted!: () => void;
    const second = new Promise<void>((resolve) => (secondStarted = resolve));
    const warehouseActivities = {
      recordStreamRun: async () => undefined,
      listFunnelIds: async () => ({ ids, requests: 1 }),
      syncFunnelSubscribers: async (input: { funnelId: number }) => {
        inFlight++;
        mostAtOnce = Math.max(mostAtOnce, inFlight);
        if (inFlight >= 2) secondStarted();
        if (input.funnelId === ids[0]) await Promise.race([second, new Promise((r) => setTimeout(r, 5_000))]);
        inFlight--;
        loaded.push(input.funnelId);
        return { rows: 3, pages: 1, requests: 1, inserted: 0, updated: 0, unchanged: 3, deleted: 0 };
      },
      pruneFunnelSubscribers: async () => ({ funnels: 0, deleted: 0 }),
    };
    await withProductionWorkers({ warehouseActivities, warehouseConcurrency: 8 }, async ({ client, taskQueue, warehouseTaskQueue }) => {
      const input: StreamWorkflowInput = {
        runId: 'run-1',
        stream: 'funnel_subscribers',
        full: false,
        reconcile: 'auto',
        reconcileEveryMs: 86_400_000,
        tuning: DEFAULT_TUNING,
        warehouseTaskQueue,
      };
      const result = (await client.workflow.execute('syncStreamWorkflow', { taskQueue: taskQueue, workflowId: `stream-${randomUUID()}`, args: [input] })) as StreamResult;
      expect(mostAtOnce).toBeGreaterThanOrEqual(2);
      expect([...loaded].sort((a, b) => a - b)).toEqual(ids);
      expect(result).toMatchObject({ stream: 'funnel_subscribers', rows: 21, unchanged: 21, requests: 1 + ids.length });
    });
  });
});
