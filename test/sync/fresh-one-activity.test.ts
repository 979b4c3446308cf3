import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { FreshContactsResult } from '../../activities/sync-fresh-contacts.js';
import { DEFAULT_TUNING, type StreamResult, type StreamWorkflowInput } from '../../workflows/sync-types.js';
import { withProductionWorkers } from '../helpers/temporal.js';

const NO_STATS = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };

/**
 * An incremental contacts run on a real Temporal server with the production workers and
 * stand-in warehouse activities. Its plan, its fetch of new contacts and its three freshness
 * checks were five activities one after another, their round trips most of a sync with nothing
 * to do; now they are one activity (startContactsRun), and the run reports what each found as before.
 */
describe('contacts freshness checks', () => {
  it('run as one activity whose three results the stream reports', { timeout: 90_000 }, async () => {
    const called: string[] = [];
    const separate = (name: string) => async () => {
      called.push(name);
      throw ApplicationFailure.nonRetryable(`${name} is one of the steps startContactsRun runs; the workflow must not call it on its own`);
    };
    const fresh: FreshContactsResult = {
      updated: { ran: true, probed: false, pages: 1, rows: 7, requests: 1, orderBroken: false, ...NO_STATS, updated: 2, unchanged: 5 },
      members: { checked: 13, differing: ['tag 4'], rows: 3, confirmed: 0, requests: 3, sweepInstead: false, ...NO_STATS, updated: 1, unchanged: 2 },
      slice: { pages: 1, rows: 50, requests: 1, fromId: 1, toId: 50, cycleDone: false, ...NO_STATS, unchanged: 50 },
    };
    const warehouseActivities = {
      recordStreamRun: async () => undefined,
      startContactsRun: async (input: { sweepRuns: number }) => {
        called.push(`startContactsRun sweepRuns=${input.sweepRuns}`);
        return {
          plan: { mode: 'incremental', resumeScan: false, maxId: 400, reconcileDue: false },
          fresh: { pages: 1, rows: 0, requests: 1, crmTotal: 400, liveCount: 400, maxId: 400, ...NO_STATS },
          refreshed: fresh,
        };
      },
      planContactsRun: separate('planContactsRun'),
      fetchNewContacts: separate('fetchNewContacts'),
      refreshContacts: separate('refreshContacts'),
      scanUpdatedContacts: separate('scanUpdatedContacts'),
      repairMemberships: separate('repairMemberships'),
      sweepContactSlice: separate('sweepContactSlice'),
    };
    await withProductionWorkers({ warehouseActivities, warehouseConcurrency: 4 }, async ({ client, taskQueue, warehouseTaskQueue }) => {
      const input: StreamWorkflowInput = {
        runId: 'run-1',
        stream: 'contacts',
        full: false,
        reconcile: 'auto',
        reconcileEveryMs: 86_400_000,
        tuning: { ...DEFAULT_TUNING, sweepRuns: 7 },
        warehouseTaskQueue,
      };
      const workflowId = `stream-${randomUUID()}`;
      const result = (await client.workflow.execute('syncStreamWorkflow', { taskQueue: taskQueue, workflowId, args: [input] })) as StreamResult;
      expect(called).toEqual(['startContactsRun sweepRuns=7']);
      expect(result.mode).toBe('incremental');
      expect(result.fresh).toEqual({
        updatedFirst: { rows: 7, updated: 2, requests: 1, orderBroken: false },
        memberships: { checked: 13, differing: ['tag 4'], rows: 3, updated: 1, deleted: 0, requests: 3, sweepInstead: false },
        slice: { fromId: 1, toId: 50, rows: 50, updated: 0, requests: 1, cycleDone: false },
      });
      // The totals add up the fetch of new contacts and all three checks.
      expect(result).toMatchObject({ rows: 60, updated: 3, requests: 6 });
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const scheduled = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      expect(scheduled.filter((a) => a !== 'recordStreamRun')).toEqual(['startContactsRun']);
    });
  });
});
