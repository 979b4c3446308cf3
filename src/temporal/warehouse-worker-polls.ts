import type { Client } from '@temporalio/client';

/**
 * A poller counts as a running worker when it polled this recently. The server keeps listing a
 * stopped worker's pollers for minutes, while a live one re-polls at least every long-poll
 * (about a minute).
 */
const LIVE_POLLER_MS = 70_000;

/**
 * True when a worker polls `taskQueue` for activities (DescribeTaskQueue's pollers): the
 * warehouse worker, which owns the DuckDB file, runs already and a command should use it.
 */
export async function warehouseWorkerPolls(client: Client, taskQueue: string, now = Date.now()): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    // TASK_QUEUE_KIND_NORMAL and TASK_QUEUE_TYPE_ACTIVITY (the enums live in @temporalio/proto,
    // not a dependency of ours).
    taskQueue: { name: taskQueue, kind: 1 },
    taskQueueType: 2,
  });
  return (response.pollers ?? []).some((p) => {
    const seconds = p.lastAccessTime?.seconds;
    if (seconds === undefined || seconds === null) return false;
    return now - Number(seconds) * 1000 < LIVE_POLLER_MS;
  });
}
