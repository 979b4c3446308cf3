import { WorkflowFailedError, type Client } from '@temporalio/client';
import { CancelledFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { TaskQueues } from '../temporal/task-queues.js';
import type { syncWorkflow } from '../../workflows/sync-workflow.js';
import { streamWorkflowId, syncWorkflowId } from '../../workflows/sync-ids.js';
import type { StreamProgress, SyncResult, SyncWorkflowInput } from '../../workflows/sync-types.js';
import { SyncAlreadyRunningError, SyncCancelledError, SyncFailedError } from './sync-errors.js';

export interface RunSyncOptions {
  client: Client;
  taskQueues: TaskQueues;
  input: Omit<SyncWorkflowInput, 'warehouseTaskQueue' | 'idScope'>;
  workflowId?: string;
  onProgress?: (streams: StreamProgress[]) => void;
  pollMs?: number;
  /** Aborting cancels the run (activities stop at their next page; run records say cancelled). */
  signal?: AbortSignal;
}

/**
 * Starts one sync run (failing if one with the same id runs), reports live progress from the
 * streams' queries while it runs, and resolves with its result or a SyncFailedError naming the
 * failed streams.
 */
export async function runSync(options: RunSyncOptions): Promise<SyncResult> {
  const workflowId = options.workflowId ?? syncWorkflowId(options.taskQueues.main);
  let handle;
  try {
    handle = await options.client.workflow.start<typeof syncWorkflow>('syncWorkflow', {
      taskQueue: options.taskQueues.main,
      workflowId,
      workflowIdConflictPolicy: 'FAIL',
      args: [{ ...options.input, warehouseTaskQueue: options.taskQueues.warehouse, idScope: options.taskQueues.main }],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new SyncAlreadyRunningError(workflowId);
    throw err;
  }
  const runId = handle.firstExecutionRunId;
  const cancel = (): void => void handle.cancel().catch(() => undefined);
  options.signal?.addEventListener('abort', cancel, { once: true });
  if (options.signal?.aborted) cancel();
  const result = handle.result();
  let stop = false;
  const poller = (async () => {
    if (!options.onProgress) return;
    while (!stop) {
      const streams = await readStreamProgress(options.client, options.input.streams, options.taskQueues.main, runId).catch(() => undefined);
      if (streams && !stop) options.onProgress(streams);
      await Promise.race([result.catch(() => undefined), sleep(options.pollMs ?? 500)]);
    }
  })();
  try {
    return await result;
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure) throw new SyncCancelledError(workflowId, { cause: err });
    if (err instanceof WorkflowFailedError) throw new SyncFailedError(innermostMessage(err), { cause: err });
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', cancel);
    stop = true;
    await poller;
    if (options.onProgress) {
      const streams = await readStreamProgress(options.client, options.input.streams, options.taskQueues.main, runId).catch(() => undefined);
      if (streams) options.onProgress(streams);
    }
  }
}

/** Progress of each stream's latest workflow (running or just finished), via its query; only run `runId`'s when given. */
export async function readStreamProgress(client: Client, streams: readonly string[], scope: string, runId?: string): Promise<StreamProgress[]> {
  const out = await Promise.all(
    streams.map(async (s) => {
      try {
        return await client.workflow.getHandle(streamWorkflowId(s, scope)).query<StreamProgress>('progress');
      } catch {
        return undefined;
      }
    }),
  );
  return out.filter((p): p is StreamProgress => p !== undefined && (runId === undefined || p.runId === runId));
}

function innermostMessage(err: Error): string {
  let e: Error = err;
  while (e.cause instanceof Error) e = e.cause;
  return e.message;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
