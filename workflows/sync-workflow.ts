import { ApplicationFailure, CancellationScope, ParentClosePolicy, isCancellation, patched, setHandler, startChild, workflowInfo, type ChildWorkflowHandle } from '@temporalio/workflow';
import { failureMessage } from './failure-message.js';
import { bookkeepingActivities } from './sync-activity-proxies.js';
import { unknownStreams, unknownStreamsMessage, type StreamName } from './streams.js';
import { streamWorkflowId } from './sync-ids.js';
import { syncProgressQuery } from './sync-queries.js';
import { syncStreamWorkflow } from './sync-stream-workflow.js';
import { DEFAULT_TUNING, type StreamResult, type SyncProgress, type SyncResult, type SyncWorkflowInput } from './sync-types.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * One sync run: a child workflow per stream, all at once (each child's id is per stream, so a
 * stream already being synced by another run is not synced twice: it is reported in `busy`, and
 * a manual `crmsync sync` joins that run's child instead). A failed stream does not stop the
 * others; the run fails at the end, naming every failed stream.
 */
export async function syncWorkflow(input: SyncWorkflowInput): Promise<SyncResult> {
  // Before any command, so a valid input's history is the same as without the check.
  const unknown = unknownStreams(input.streams);
  if (unknown.length > 0) throw ApplicationFailure.nonRetryable(unknownStreamsMessage(unknown), 'UNKNOWN_STREAM');
  const runId = workflowInfo().runId;
  const tuning = { ...DEFAULT_TUNING, ...input.tuning };
  const state: SyncProgress = { runId, streams: {} };
  for (const s of input.streams) state.streams[s] = { status: 'pending' };
  setHandler(syncProgressQuery, () => state);

  const children = await Promise.all(
    input.streams.map(async (stream): Promise<[StreamName, ChildWorkflowHandle<typeof syncStreamWorkflow> | 'busy' | Error]> => {
      try {
        const handle = await startChild(syncStreamWorkflow, {
          workflowId: streamWorkflowId(stream, input.idScope),
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          args: [
            {
              runId,
              stream,
              full: input.full ?? false,
              reconcile: input.reconcile ?? 'auto',
              reconcileEveryMs: input.reconcileEveryMs ?? DAY_MS,
              tuning,
              warehouseTaskQueue: input.warehouseTaskQueue,
              ...(input.streams.length === 1 ? { publishAtEnd: true } : {}),
            },
          ],
        });
        state.streams[stream] = { status: 'running' };
        return [stream, handle];
      } catch (err) {
        if (isCancellation(err)) throw err;
        // The SDK's WorkflowExecutionAlreadyStartedError (not exported to workflows): the stream's id is taken.
        if (err instanceof Error && err.name === 'WorkflowExecutionAlreadyStartedError') return [stream, 'busy'];
        return [stream, new Error(`stream "${stream}" is already being synced by another run (${failureMessage(err)})`)];
      }
    }),
  );

  const results: StreamResult[] = [];
  const failed: { stream: StreamName; error: string }[] = [];
  const busy: StreamName[] = [];
  // Every child is awaited, also after one reports cancelled: the run ends once all have stopped.
  let cancelled: unknown;
  await Promise.all(
    children.map(async ([stream, handle]) => {
      if (handle === 'busy') {
        state.streams[stream] = { status: 'busy' };
        busy.push(stream);
        return;
      }
      if (handle instanceof Error) {
        state.streams[stream] = { status: 'failed', error: handle.message };
        failed.push({ stream, error: handle.message });
        return;
      }
      try {
        const result = await handle.result();
        state.streams[stream] = { status: 'succeeded', result };
        results.push(result);
      } catch (err) {
        if (isCancellation(err)) {
          state.streams[stream] = { status: 'cancelled' };
          cancelled ??= err;
          return;
        }
        state.streams[stream] = { status: 'failed', error: failureMessage(err) };
        failed.push({ stream, error: failureMessage(err) });
      }
    }),
  );

  if (cancelled !== undefined) {
    // The streams recorded how they stopped and what they loaded before the cancel is committed:
    // `status`, `query` and the report show it now, not after the next run. Cancellation of this
    // run does not stop the publish; a publish that fails leaves the run reported as cancelled.
    if (patched('publish-cancelled-runs')) {
      await CancellationScope.nonCancellable(() => bookkeepingActivities(input.warehouseTaskQueue).publishLake()).catch(() => undefined);
    }
    throw cancelled;
  }
  // A run of one stream was published by that stream's final record (publishAtEnd).
  const publishedByStream = input.streams.length === 1 && results[0]?.published === true;
  if (results.length > 0 && !publishedByStream) await bookkeepingActivities(input.warehouseTaskQueue).publishLake();
  else if (failed.length > 0 && patched('publish-failed-runs')) {
    // The failures' records reach the lake's readers (`status`, `query`, the report) now, not at
    // the next run that succeeds. A publish that fails too leaves the streams' errors to report.
    await bookkeepingActivities(input.warehouseTaskQueue)
      .publishLake()
      .catch(() => undefined);
  }
  if (failed.length > 0) {
    throw ApplicationFailure.create({
      type: 'SYNC_STREAMS_FAILED',
      message: `Sync failed for ${failed.map((f) => `${f.stream}: ${f.error}`).join('; ')}`,
      nonRetryable: true,
      details: [{ failed, results }],
    });
  }
  return { runId, streams: results, failed, busy };
}
