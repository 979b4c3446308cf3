// Pure values shared by the workflows and the command line (type imports only, so both sides may use it).
// Ids are scoped by the main task queue (CRMSYNC_TASK_QUEUE, default "crmsync"): one deployment,
// one id per stream, whatever the number of runs or schedules.

import type { StreamName } from './streams.js';

/** One id per stream: Temporal refuses a second running child with the same id. */
export function streamWorkflowId(stream: StreamName, scope = 'crmsync'): string {
  return `${scope}-stream-${stream}`;
}

/** Manual `crmsync sync` runs use this id with a failing conflict policy. */
export function syncWorkflowId(scope = 'crmsync'): string {
  return `${scope}-sync`;
}

export const SYNC_WORKFLOW_ID = syncWorkflowId();
