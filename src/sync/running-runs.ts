import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { failureMessage } from '../../workflows/failure-message.js';
import type { StreamName } from '../../workflows/streams.js';
import { streamWorkflowId } from '../../workflows/sync-ids.js';
import type { StreamResult, SyncProgress, SyncResult } from '../../workflows/sync-types.js';

/** A stream child another run (a schedule's, or an earlier command's) is running now. */
export interface RunningStream {
  stream: StreamName;
  /** The run id of that stream workflow's execution. */
  runId: string;
  /** The workflow that started it (a schedule's run, `crmsync-sync`, ...), when known. */
  parentWorkflowId: string | undefined;
}

/** The streams of `streams` whose child workflow is running now, under any parent. */
export async function findRunningStreams(client: Client, streams: readonly StreamName[], scope: string): Promise<RunningStream[]> {
  const found = await Promise.all(
    streams.map(async (stream): Promise<RunningStream | undefined> => {
      try {
        const d = await client.workflow.getHandle(streamWorkflowId(stream, scope)).describe();
        if (d.status.name !== 'RUNNING') return undefined;
        return { stream, runId: d.runId, parentWorkflowId: d.parentExecution?.workflowId ?? undefined };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    }),
  );
  return found.filter((r): r is RunningStream => r !== undefined);
}

const QUERY_DEADLINE_MS = 20_000;

/** A sync run (workflow `workflowId`) that is running now, with the streams it covers; undefined if none. */
export async function findRunningSync(client: Client, workflowId: string): Promise<{ runId: string; streams: StreamName[] } | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return undefined;
    // Queries need a worker: the caller serves the queues (embedded) or a `crmsync worker` does.
    // Without an answer the run is still followed; the streams it covered are then synced again.
    const progress = await client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query<SyncProgress>('syncProgress')).catch(() => undefined);
    return { runId: d.runId, streams: progress ? (Object.keys(progress.streams) as StreamName[]) : [] };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

export type JoinedOutcome = { stream: StreamName; result: StreamResult } | { stream: StreamName; error: string; cancelled: boolean };

/** Waits for a running stream child to end; its result, or why it did not succeed. */
export async function awaitStream(client: Client, running: RunningStream, scope: string): Promise<JoinedOutcome> {
  try {
    const result = await client.workflow.getHandle(streamWorkflowId(running.stream, scope), running.runId).result();
    return { stream: running.stream, result: result as StreamResult };
  } catch (err) {
    const cancelled = err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure;
    return { stream: running.stream, error: innermostMessage(err), cancelled };
  }
}

/** Adds `outcomes` of joined streams to a run's result (or to an empty one). */
export function mergeJoined(base: SyncResult, outcomes: readonly JoinedOutcome[]): SyncResult {
  const out: SyncResult = { ...base, streams: [...base.streams], failed: [...base.failed], joined: [...(base.joined ?? [])] };
  for (const o of outcomes) {
    out.joined!.push(o.stream);
    if ('result' in o) out.streams.push(o.result);
    else out.failed.push({ stream: o.stream, error: o.cancelled ? 'the run syncing it was cancelled' : o.error });
  }
  return out;
}

/** The message that names the fix (workflows/failure-message.ts). */
export const innermostMessage = failureMessage;
