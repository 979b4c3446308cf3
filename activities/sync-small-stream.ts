import type { SmallStreamName } from '../workflows/streams.js';
import { modeAfterRun } from '../workflows/stream-mode.js';
import type { ContactsMode, StreamTotals } from '../workflows/sync-types.js';
import { createEntityActivities, type EntityResult } from './sync-entities.js';
import { createRunActivities } from './sync-runs.js';
import type { SyncActivityDeps } from './sync-deps.js';

export interface SmallStreamInput {
  runId: string;
  stream: SmallStreamName;
  loadId: string;
  full: boolean;
  startedAtMs: number;
}

/**
 * A small stream's whole run as one activity: its start record, its sync and its final record.
 * As three activities, each with a workflow task between, their round trips were most of a sync
 * with nothing to do. A retry redoes all three: the records are rewritten and the merge is
 * idempotent. A failure is recorded by the workflow, as for every stream.
 */
export function createSmallStreamActivities(deps: SyncActivityDeps) {
  const runs = createRunActivities(deps);
  const entities = createEntityActivities(deps);
  const now = deps.now ?? Date.now;
  return {
    async syncSmallStream(input: SmallStreamInput): Promise<EntityResult & { mode: ContactsMode }> {
      const record = { runId: input.runId, stream: input.stream, startedAtMs: input.startedAtMs };
      const zero: StreamTotals = { pages: 0, rows: 0, requests: 0, inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
      await runs.recordStreamRun({ ...record, ...zero, mode: input.full ? 'backfill' : 'incremental', finishedAtMs: null, status: 'running', error: null });
      const r = await entities.syncEntityStream({ stream: input.stream, loadId: input.loadId });
      const totals: StreamTotals = { pages: r.pages, rows: r.rows, requests: r.requests, inserted: r.inserted, updated: r.updated, unchanged: r.unchanged, deleted: r.deleted };
      const mode = modeAfterRun(input.stream, input.full, totals);
      await runs.recordStreamRun({ ...record, ...totals, mode, finishedAtMs: now(), status: r.skipped ? 'skipped' : 'succeeded', error: r.skipped ?? null });
      return { ...r, mode };
    },
  };
}
