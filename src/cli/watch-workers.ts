import type { Client, Connection } from '@temporalio/client';
import { CrmsyncError } from '../errors.js';
import type { TaskQueues } from '../temporal/task-queues.js';
import { workerPolls } from '../temporal/warehouse-worker-polls.js';

/** A run was cancelled while no worker served it: Temporal keeps it open until one does. */
export class NoWorkerToCancelError extends CrmsyncError {
  constructor(what: string, workflowId: string, queues: TaskQueues) {
    super(
      'NO_WORKER',
      `The ${what} was cancelled, but no crmsync worker polls task queue "${queues.main}", so the run ${workflowId} stays open in Temporal until one does (it then ends as cancelled): start \`crmsync worker\` with the same settings, or end it now with \`temporal workflow terminate --workflow-id ${workflowId}\`.`,
    );
  }
}

export interface WatchWorkersOptions {
  client: Client;
  queues: TaskQueues;
  /** Where Temporal is (TEMPORAL_ADDRESS), for the message. */
  address: string;
  /** `sync` or `push`, for the messages. */
  what: string;
  workflowId: string;
  /** Aborted when the user cancels (Ctrl-C, SIGTERM). */
  signal: AbortSignal;
  write: (line: string) => unknown;
  firstCheckMs?: number;
  everyMs?: number;
}

/**
 * With a Temporal of the user's own (TEMPORAL_ADDRESS), a command only starts a workflow: a
 * `crmsync worker` runs it. Without one the command would wait in silence, and a cancel would
 * never be taken up. This watch says so on stderr, naming the fix, once a worker is missing
 * after `firstCheckMs` (and again every `everyMs` while it stays missing); after a cancel with no
 * worker, `unserved` rejects so the command can end. `stop()` ends the watch.
 */
export function watchWorkers(o: WatchWorkersOptions): { unserved: Promise<never>; stop: () => void } {
  let stopped = false;
  let wake: (() => void) | undefined;
  let rejectUnserved: (err: Error) => void = () => undefined;
  const unserved = new Promise<never>((_, reject) => (rejectUnserved = reject));
  unserved.catch(() => undefined);
  const onAbort = (): void => wake?.();
  o.signal.addEventListener('abort', onAbort, { once: true });
  // A cancel that came while the pollers were being read is looked at at once, not a pause later.
  let lookedAfterCancel = false;
  const pause = (ms: number): Promise<void> =>
    o.signal.aborted && !lookedAfterCancel
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(resolve, ms);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });

  const missing = async (): Promise<string[]> => {
    const [workflows, activities] = await Promise.all([workerPolls(o.client, o.queues.main, 'workflow'), workerPolls(o.client, o.queues.warehouse, 'activity')]);
    return [...(workflows ? [] : [`"${o.queues.main}" (workflows)`]), ...(activities ? [] : [`"${o.queues.warehouse}" (the warehouse writer)`])];
  };

  const loop = async (): Promise<void> => {
    await pause(o.firstCheckMs ?? 3_000);
    while (!stopped) {
      lookedAfterCancel = o.signal.aborted;
      const absent = await missing().catch(() => []);
      if (stopped) return;
      if (absent.length > 0) {
        if (o.signal.aborted && absent.some((q) => q.includes('(workflows)'))) {
          rejectUnserved(new NoWorkerToCancelError(o.what, o.workflowId, o.queues));
          return;
        }
        o.write(
          `crmsync: no crmsync worker polls task queue ${absent.join(' or ')} on ${o.address}: the ${o.what} waits until one does; start \`crmsync worker\` with the same settings (CRMSYNC_TASK_QUEUE, TEMPORAL_NAMESPACE), or unset TEMPORAL_ADDRESS to run on the embedded server\n`,
        );
      }
      await pause(o.everyMs ?? 30_000);
    }
  };
  loop().catch(() => undefined);

  return {
    unserved,
    stop: () => {
      stopped = true;
      o.signal.removeEventListener('abort', onAbort);
      wake?.();
    },
  };
}

/**
 * Runs `run` (which starts a workflow and waits for it) under `watchWorkers`: ends with
 * NoWorkerToCancelError when a cancel finds no worker, and then aborts the calls still waiting on
 * the run (a result's long poll), so the command exits at once.
 */
export async function runWatched<T>(t: { client: Client; connection: Connection }, o: Omit<WatchWorkersOptions, 'client'>, run: () => Promise<T>): Promise<T> {
  const watch = watchWorkers({ ...o, client: t.client });
  const calls = new AbortController();
  try {
    return await Promise.race([t.connection.withAbortSignal(calls.signal, run), watch.unserved]);
  } finally {
    watch.stop();
    calls.abort();
  }
}
