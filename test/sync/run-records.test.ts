import { describe, expect, it } from 'vitest';
import { streamWorkflowId } from '../../workflows/sync-ids.js';
import { SMALL_TUNING, withSyncEnv } from './helpers/sync-env.js';

// Issue 16: most of a sync with nothing to do is activity round trips. A stream's start record
// and its first step are independent, so the stream workflow schedules them in one workflow task.
describe('stream run records', () => {
  it('are written alongside the first step, and each run ends recorded as succeeded', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 60, seed: 16 } }, async (env) => {
      await env.sync({ streams: ['tags', 'contacts'], tuning: SMALL_TUNING });
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
        expect(scheduled).toEqual(['recordStreamRun', stream === 'tags' ? 'syncEntityStream' : 'planContactsRun']);
      }
      const runs = await env.read((w) => w.query(`SELECT stream, status, finished_at IS NOT NULL AS finished FROM _sync_runs WHERE run_id = $1 ORDER BY stream`, [result.runId]));
      expect(runs).toEqual([
        { stream: 'contacts', status: 'succeeded', finished: true },
        { stream: 'tags', status: 'succeeded', finished: true },
      ]);
    });
  });
});
