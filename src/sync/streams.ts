import { ConfigError } from '../errors.js';
import { STREAMS, unknownStreams, unknownStreamsMessage, type StreamName } from '../../workflows/streams.js';

/** Validates `--stream` values (defaults to every stream) and removes duplicates, keeping run order. */
export function resolveStreams(requested: readonly string[] | undefined): StreamName[] {
  if (!requested || requested.length === 0) return [...STREAMS];
  const unknown = unknownStreams(requested);
  if (unknown.length > 0) {
    throw new ConfigError(unknownStreamsMessage(unknown));
  }
  return STREAMS.filter((s) => requested.includes(s));
}

/**
 * The streams with the longest chains of activities (contacts' new-then-fresh checks, funnel
 * subscribers' funnel listing then one activity per funnel, the report snapshots), in the order a
 * run should start them: the server starts a run's children one after another, and under load the
 * last started seconds after the first, so a long chain started last ended the run late.
 */
const LONG_FIRST: readonly StreamName[] = ['contacts', 'funnel_subscribers', 'reports'];

/** `streams` in the order a run starts them: the long chains first, then the rest as given. */
export function startOrder(streams: readonly StreamName[]): StreamName[] {
  return [...LONG_FIRST.filter((s) => streams.includes(s)), ...streams.filter((s) => !LONG_FIRST.includes(s))];
}

export { streamWorkflowId, syncWorkflowId, SYNC_WORKFLOW_ID } from '../../workflows/sync-ids.js';
