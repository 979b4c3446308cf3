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
    /**
     * One `_sync_runs` row per run and stream, written at start (running) and rewritten at the end.
     * A contacts run's final record takes its inserted and updated counts from what its loads
     * wrote (the history), not from the attempts' reports, which lose an attempt that loaded
     * pages and crashed before reporting; those counts come back as `counts`.
     */
    async recordStreamRun(run: StreamRunRecord): Promise<{ published: boolean; counts?: Pick<StreamTotals, 'rows' | 'inserted' | 'updated'> }> {
      let counts: Pick<StreamTotals, 'rows' | 'inserted' | 'updated'> | undefined;
      await writes.run(async (w) => {
        if (run.stream === 'contacts' && run.status !== 'running') {
          // Best effort: a count that fails (a warehouse short of memory) must not fail the record.
          const wrote = await w.contactLoadCounts(`${run.runId}:contacts`).catch((err: unknown) => {
            deps.logger.warn({ err, stream: run.stream }, "counting the run's loads from the history failed; the run keeps its attempts' counts");
            return undefined;
          });
          // Rows read by the crashed attempts are not in `rows` either: at least what was written.
          if (wrote) counts = { rows: Math.max(run.rows, run.rows + wrote.inserted + wrote.updated - run.inserted - run.updated), ...wrote };
        }
        await w.recordRun({
          runId: run.runId,
          stream: run.stream,
          mode: run.mode,
          startedAt: new Date(run.startedAtMs),
          finishedAt: run.finishedAtMs === null ? null : new Date(run.finishedAtMs),
          status: run.status,
          pages: run.pages,
          requests: run.requests,
          inserted: counts?.inserted ?? run.inserted,
          updated: counts?.updated ?? run.updated,
          unchanged: run.unchanged,
          deleted: run.deleted,
          error: run.error === null ? null : run.error.slice(0, MAX_ERROR_CHARS),
        });
      });
      const withCounts = counts ? { counts } : {};
      if (!run.publish) return { published: false, ...withCounts };
      // A failed publish does not fail the record: the run's own publish activity (with its
      // retries) writes the lake instead.
      try {
        await writes.run((w) => w.publishLake(undefined, { lanes: 2 }));
        return { published: true, ...withCounts };
      } catch (err) {
        deps.logger.warn({ err, stream: run.stream }, "publishing the lake after the stream's record failed; the run publishes it");
        return { published: false, ...withCounts };
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
