// Pure values shared by the workflows and the command line (no imports, so both sides may use it).

/** One id per stream: Temporal refuses a second running child with the same id. */
export function streamWorkflowId(stream: string): string {
  return `crmsync-stream-${stream}`;
}

/** Manual `crmsync sync` runs use this id with a failing conflict policy; schedules add their own suffix. */
export const SYNC_WORKFLOW_ID = 'crmsync-sync';
