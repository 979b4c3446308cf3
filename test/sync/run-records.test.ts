import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { streamWorkflowId, syncWorkflowId } from '../../workflows/sync-ids.js';
import { SMALL_TUNING, withSyncEnv } from './helpers/sync-env.js';

// Issue 16: most of a sync with nothing to do is activity round trips. A stream's start record
// and its first step are independent, so the stream workflow schedules them in one workflow task;
// a small stream's records and sync are one activity.
const activitiesOf = (history: temporal.api.history.v1.IHistory) =>
  (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);

describe('stream run records', () => {
  it('are written alongside the first step, and each run ends recorded as succeeded', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 60, seed: 16 } }, async (env) => {
      const first = await env.sync({ streams: ['tags', 'contacts'], tuning: SMALL_TUNING });
      const result = await env.sync({ streams: ['tags', 'contacts'], tuning: SMALL_TUNING });
      for (const stream of ['tags', 'contacts'] as const) {
        const history = await env.client.workflow.getHandle(streamWorkflowId(stream, env.queues.main)).fetchHistory();
        const events = history.events ?? [];
        // The commands of the first workflow task: the events after its completion, up to the next task.
        const firstDone = events.findIndex((e) => e.workflowTaskCompletedEventAttributes);
        const next = events.findIndex((e, i) => i > firstDone && e.workflowTaskScheduledEventAttributes);
        const scheduled = events
          .slice(firstDone + 1, next)
          .filter((e) => e.activityTaskScheduledEventAttributes)
          .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
        expect(scheduled).toEqual(stream === 'tags' ? ['syncSmallStream'] : ['recordStreamRun', 'startContactsRun']);
        // A small stream with nothing new: one activity and two workflow tasks in all.
        if (stream === 'tags') {
          expect(events.filter((e) => e.activityTaskScheduledEventAttributes).length).toBe(1);
          expect(events.filter((e) => e.workflowTaskCompletedEventAttributes).length).toBe(2);
        }
      }
      const runs = (runId: string) => env.read((w) => w.query(`SELECT stream, mode, status, finished_at IS NOT NULL AS finished, inserted FROM _sync_runs WHERE run_id = $1 ORDER BY stream`, [runId]));
      expect(await runs(first.runId)).toEqual([
        { stream: 'contacts', mode: 'backfill', status: 'succeeded', finished: true, inserted: 60 },
        { stream: 'tags', mode: 'backfill', status: 'succeeded', finished: true, inserted: expect.any(Number) },
      ]);
      expect(await runs(result.runId)).toEqual([
        { stream: 'contacts', mode: 'incremental', status: 'succeeded', finished: true, inserted: 0 },
        { stream: 'tags', mode: 'incremental', status: 'succeeded', finished: true, inserted: 0 },
      ]);
      expect(result.streams.find((s) => s.stream === 'tags')).toMatchObject({ mode: 'incremental', inserted: 0, updated: 0, deleted: 0 });
    });
  });

  it('a run of one stream: its scan starts with the plan, and its final record publishes the lake', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 140, seed: 20 } }, async (env) => {
      const result = await env.sync({ streams: ['contacts'], tuning: SMALL_TUNING });
      expect(result.streams).toEqual([expect.objectContaining({ stream: 'contacts', mode: 'backfill', inserted: 140, published: true })]);
      // The plan and the scan's start in one activity: no startContactsScan before the ranges.
      const stream = activitiesOf(await env.client.workflow.getHandle(streamWorkflowId('contacts', env.queues.main)).fetchHistory());
      expect(stream.slice(0, 3)).toEqual(['recordStreamRun', 'startContactsRun', 'syncContactPages']);
      expect(stream).not.toContain('startContactsScan');
      expect(stream.at(-1)).toBe('recordStreamRun');
      // The run itself schedules no publish: the stream's final record did it.
      expect(activitiesOf(await env.client.workflow.getHandle(syncWorkflowId(env.queues.main), result.runId).fetchHistory())).toEqual([]);
      const lake = join(env.config.lakePath, '_sync_runs', '*.parquet');
      const [published] = await env.read((w) => w.query(`SELECT status, inserted FROM read_parquet('${lake}') WHERE run_id = $1`, [result.runId]));
      expect(published).toEqual({ status: 'succeeded', inserted: 140 });
      const [contacts] = await env.read((w) => w.query(`SELECT count(*) AS n FROM read_parquet('${join(env.config.lakePath, 'contacts', '*', '*.parquet')}')`));
      expect(contacts).toEqual({ n: 140 });

      // Two streams: each records without publishing, and the run publishes once at its end.
      const both = await env.sync({ streams: ['tags', 'contacts'], tuning: SMALL_TUNING });
      expect(both.streams.map((s) => s.published)).toEqual([undefined, undefined]);
      expect(activitiesOf(await env.client.workflow.getHandle(syncWorkflowId(env.queues.main), both.runId).fetchHistory())).toEqual(['publishLake']);
    });
  });
});
