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

export { streamWorkflowId, syncWorkflowId, SYNC_WORKFLOW_ID } from '../../workflows/sync-ids.js';
