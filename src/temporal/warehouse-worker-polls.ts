import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import { isProcessAlive } from '../process-alive.js';

/**
 * A poller counts as a running worker when it polled this recently. The server keeps listing a
 * stopped worker's pollers for minutes, while a live one re-polls at least every long-poll
 * (about a minute).
 */
const LIVE_POLLER_MS = 70_000;

export interface PollerSeen {
  lastAccessMs: number | undefined;
  /** The worker's identity: the SDK's default is `<pid>@<host>`. */
  identity: string | undefined;
}

/**
 * Whether a listed poller is a running worker: it polled recently, and it is not a process of
 * this host that has exited (the last command's in-process workers stay listed for a minute after
 * it ended; seeing them as running made every next command wait to open the file first).
 */
export function pollerIsLive(p: PollerSeen, now: number, host = hostname(), alive: (pid: number) => boolean = isProcessAlive): boolean {
  if (p.lastAccessMs === undefined || now - p.lastAccessMs >= LIVE_POLLER_MS) return false;
  const m = /^(\d+)@(.+)$/.exec(p.identity ?? '');
  if (m && m[2] === host && !alive(Number(m[1]))) return false;
  return true;
}

/**
 * True when a worker polls `taskQueue` for activities (DescribeTaskQueue's pollers): the
 * warehouse worker, which owns the DuckDB file, runs already and a command should use it.
 */
export function warehouseWorkerPolls(client: Client, taskQueue: string, now = Date.now()): Promise<boolean> {
  return workerPolls(client, taskQueue, 'activity', now);
}

/** True when a running worker polls `taskQueue` for tasks of this kind. */
export async function workerPolls(client: Client, taskQueue: string, kind: 'workflow' | 'activity', now = Date.now()): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    // TASK_QUEUE_KIND_NORMAL, and TASK_QUEUE_TYPE_WORKFLOW (1) or _ACTIVITY (2) (the enums live in
    // @temporalio/proto, not a dependency of ours).
    taskQueue: { name: taskQueue, kind: 1 },
    taskQueueType: kind === 'workflow' ? 1 : 2,
  });
  return (response.pollers ?? []).some((p) => {
    const seconds = p.lastAccessTime?.seconds;
    return pollerIsLive({ lastAccessMs: seconds === undefined || seconds === null ? undefined : Number(seconds) * 1000, identity: p.identity ?? undefined }, now);
  });
}
