import type { SyncRunStatus } from '../src/warehouse/types.js';
import type { StreamName } from '../workflows/streams.js';
import type { ContactsMode, StreamTotals } from '../workflows/sync-types.js';
import type { SyncActivityDeps } from './sync-deps.js';

export interface StreamRunRecord extends StreamTotals {
  runId: string;
  stream: StreamName;
  mode: ContactsMode;
  startedAtMs: number;
  finishedAtMs: number | null;
  status: SyncRunStatus;
  error: string | null;
  /** Publish the lake after the record (the run's closing publish, in two lanes); see recordStreamRun. */
  publish?: boolean;
}

const MAX_ERROR_CHARS = 2_000;

export function createRunActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  return {
    /** One `_sync_runs` row per run and stream, written at start (running) and rewritten at the end. */
    async recordStreamRun(run: StreamRunRecord): Promise<{ published: boolean }> {
      await writes.run((w) =>
        w.recordRun({
          runId: run.runId,
          stream: run.stream,
          mode: run.mode,
          startedAt: new Date(run.startedAtMs),
          finishedAt: run.finishedAtMs === null ? null : new Date(run.finishedAtMs),
          status: run.status,
          pages: run.pages,
          requests: run.requests,
          inserted: run.inserted,
          updated: run.updated,
          unchanged: run.unchanged,
          deleted: run.deleted,
          error: run.error === null ? null : run.error.slice(0, MAX_ERROR_CHARS),
        }),
      );
      if (!run.publish) return { published: false };
      // A failed publish does not fail the record: the run's own publish activity (with its
      // retries) writes the lake instead.
      try {
        await writes.run((w) => w.publishLake(undefined, { lanes: 2 }));
        return { published: true };
      } catch (err) {
        deps.logger.warn({ err, stream: run.stream }, "publishing the lake after the stream's record failed; the run publishes it");
        return { published: false };
      }
    },

    /**
     * Publishes what the run changed to the Parquet lake, for readers while the next write holds
     * the file. The run's streams are done, so the publish takes two lanes.
     */
    async publishLake(): Promise<void> {
      await writes.run((w) => w.publishLake(undefined, { lanes: 2 }));
    },
  };
}
