import { WorkflowFailedError, type Client } from '@temporalio/client';
import { CancelledFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { TaskQueues } from '../temporal/task-queues.js';
import type { syncWorkflow } from '../../workflows/sync-workflow.js';
import type { StreamName } from '../../workflows/streams.js';
import { streamWorkflowId, syncWorkflowId } from '../../workflows/sync-ids.js';
import type { StreamProgress, SyncResult, SyncWorkflowInput } from '../../workflows/sync-types.js';
import { awaitStream, findRunningStreams, findRunningSync, innermostMessage, mergeJoined, type JoinedOutcome, type RunningStream } from './running-runs.js';
import { SyncAlreadyRunningError, SyncCancelledError, SyncFailedError } from './sync-errors.js';
import { settledProgress } from './settled-progress.js';
import { startOrder } from './streams.js';
import { createStreamProgressReader } from './stream-progress-reader.js';

export interface RunSyncOptions {
  client: Client;
  taskQueues: TaskQueues;
  input: Omit<SyncWorkflowInput, 'warehouseTaskQueue' | 'idScope'>;
  workflowId?: string;
  onProgress?: (streams: StreamProgress[]) => void;
  /** Told when the command joins work already in progress instead of starting it. */
  onJoin?: (event: JoinEvent) => void;
  pollMs?: number;
  /** Aborting cancels the run (activities stop at their next page; run records say cancelled). */
  signal?: AbortSignal;
}

export type JoinEvent = { kind: 'run'; workflowId: string; runId: string; streams: StreamName[] } | { kind: 'streams'; streams: { stream: StreamName; startedBy: string | undefined }[] };

/** Rounds of "join what runs, start the rest": each round ends one run, so two suffice unless runs keep racing us. */
const MAX_ROUNDS = 4;

/**
 * Syncs `input.streams`, whatever else runs. A run already going under this command's workflow id
 * (another `crmsync sync`, or one whose process was killed: it resumes once a worker serves it)
 * is followed to its end; streams another run is syncing (a schedule's) are joined, their progress
 * shown and their results used; the rest are synced by a run of its own. Resolves with one
 * result over all of them, or a SyncFailedError naming the failed streams.
 */
export async function runSync(options: RunSyncOptions): Promise<SyncResult> {
  const { client } = options;
  const scope = options.taskQueues.main;
  const workflowId = options.workflowId ?? syncWorkflowId(scope);
  let remaining = [...options.input.streams];
  let merged: SyncResult | undefined;
  for (let round = 0; remaining.length > 0; round++) {
    if (round >= MAX_ROUNDS) throw new SyncAlreadyRunningError(workflowId);
    // Both looks at once (one round trip before the start, not two); the streams' answer is
    // used only when no run of this command is going.
    const [existing, joined] = await Promise.all([findRunningSync(client, workflowId), findRunningStreams(client, remaining, scope)]);
    if (existing) {
      options.onJoin?.({ kind: 'run', workflowId, runId: existing.runId, streams: existing.streams });
      const result = await followRun(options, workflowId, existing.runId, { ownStreams: existing.streams, joined: [] });
      merged = combine(merged, result);
      remaining = remaining.filter((s) => !existing.streams.includes(s) || (result.busy ?? []).includes(s));
      continue;
    }
    if (joined.length > 0) options.onJoin?.({ kind: 'streams', streams: joined.map((j) => ({ stream: j.stream, startedBy: j.parentWorkflowId })) });
    const own = remaining.filter((s) => !joined.some((j) => j.stream === s));
    let runId: string | undefined;
    if (own.length > 0) {
      try {
        const handle = await client.workflow.start<typeof syncWorkflow>('syncWorkflow', {
          taskQueue: scope,
          workflowId,
          workflowIdConflictPolicy: 'FAIL',
          args: [{ ...options.input, streams: startOrder(own), warehouseTaskQueue: options.taskQueues.warehouse, idScope: scope }],
        });
        runId = handle.firstExecutionRunId;
      } catch (err) {
        // Another command started one between our look and our start: follow it next round.
        if (err instanceof WorkflowExecutionAlreadyStartedError) continue;
        throw err;
      }
    }
    const result = await followRun(options, workflowId, runId, { ownStreams: own, joined });
    merged = combine(merged, result);
    // Streams a schedule's run took between our look and our start: join them next round.
    remaining = result.busy ?? [];
  }
  const result = merged ?? { runId: '', streams: [], failed: [] };
  if (result.failed.length > 0) throw new SyncFailedError(`Sync failed for ${result.failed.map((f) => `${f.stream}: ${f.error}`).join('; ')}`);
  return result;
}

/** Runs until the sync run `runId` (if any) and the joined streams have all ended, reporting live progress. */
async function followRun(options: RunSyncOptions, workflowId: string, runId: string | undefined, parts: { ownStreams: StreamName[]; joined: RunningStream[] }): Promise<SyncResult> {
  const { client } = options;
  const scope = options.taskQueues.main;
  const handle = runId === undefined ? undefined : client.workflow.getHandle<typeof syncWorkflow>(workflowId, runId);
  const cancel = (): void => {
    handle?.cancel().catch(() => undefined); // best effort: the run's result below reports how it ended
  };
  options.signal?.addEventListener('abort', cancel, { once: true });
  if (options.signal?.aborted) cancel();
  const own = handle ? handle.result() : Promise.resolve(undefined);
  const joined = Promise.all(parts.joined.map((j) => awaitStream(client, j, scope)));
  const done = Promise.allSettled([own, joined]);
  // Our run's streams report our run id; a joined stream reports its own run's, whatever it is.
  const accept = (p: StreamProgress): boolean => parts.joined.some((j) => j.stream === p.stream) || (runId !== undefined && p.runId === runId);
  const streams = [...parts.ownStreams, ...parts.joined.map((j) => j.stream)];
  const readProgress = createStreamProgressReader(streams, (asked) => readStreamProgress(client, asked, scope, accept));
  const followedAtMs = Date.now();
  const seen = new Map<StreamName, StreamProgress>();
  const show = (progress: StreamProgress[]): void => {
    for (const p of progress) seen.set(p.stream, p);
    options.onProgress?.(progress);
  };
  let stop = false;
  const poller = (async () => {
    if (!options.onProgress) return;
    while (!stop) {
      const progress = await readProgress().catch(() => undefined);
      if (progress && !stop) show(progress);
      await Promise.race([done, sleep(options.pollMs ?? 500)]);
    }
  })();
  let outcomes: JoinedOutcome[] = [];
  let result: SyncResult | undefined;
  try {
    [result, outcomes] = await Promise.all([own, joined]);
  } catch (err) {
    await done;
    if (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure) throw new SyncCancelledError(workflowId, { cause: err });
    if (err instanceof WorkflowFailedError) throw new SyncFailedError(innermostMessage(err), { cause: err });
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', cancel);
    stop = true;
    await poller;
    if (options.onProgress) {
      // What the results say already is not asked again (see settledProgress).
      const now = Date.now();
      const settled = [
        ...(result && runId !== undefined ? result.streams.map((r) => settledProgress(r, runId, seen.get(r.stream), followedAtMs, now)) : []),
        ...outcomes.flatMap((o) => {
          const last = seen.get(o.stream);
          return 'result' in o && last ? [settledProgress(o.result, last.runId, last, followedAtMs, now)] : [];
        }),
      ];
      const progress = await readProgress(settled).catch(() => undefined);
      if (progress) show(progress);
    }
  }
  if (options.signal?.aborted && outcomes.some((o) => 'cancelled' in o && o.cancelled)) throw new SyncCancelledError(workflowId);
  return mergeJoined(result ?? { runId: runId ?? parts.joined[0]?.runId ?? '', streams: [], failed: [] }, outcomes);
}

function combine(a: SyncResult | undefined, b: SyncResult): SyncResult {
  if (!a) return b;
  return {
    runId: a.runId || b.runId,
    streams: [...a.streams, ...b.streams],
    failed: [...a.failed, ...b.failed],
    joined: [...(a.joined ?? []), ...(b.joined ?? [])],
    busy: b.busy ?? [],
  };
}

/**
 * Progress of each stream's latest workflow (running or just finished), via its query. With
 * `accept` a run id, only that run's; with a predicate, what it accepts.
 */
export async function readStreamProgress(client: Client, streams: readonly StreamName[], scope: string, accept?: string | ((p: StreamProgress) => boolean)): Promise<StreamProgress[]> {
  const out = await Promise.all(
    streams.map(async (s) => {
      try {
        return await client.workflow.getHandle(streamWorkflowId(s, scope)).query<StreamProgress>('progress');
      } catch {
        return undefined;
      }
    }),
  );
  const keep = typeof accept === 'string' ? (p: StreamProgress) => p.runId === accept : (accept ?? (() => true));
  return out.filter((p): p is StreamProgress => p !== undefined && keep(p));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
