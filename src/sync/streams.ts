import { ConfigError } from '../errors.js';

/**
 * Every stream crmsync pulls, in the order a run starts them. Funnel subscribers and reports read
 * the funnel and campaign listings themselves, so streams do not wait on each other.
 */
export const STREAM_NAMES = [
  'contacts',
  'tags',
  'lists',
  'custom_fields',
  'companies',
  'campaigns',
  'funnels',
  'funnel_subscribers',
  'reports',
] as const;

export type StreamName = (typeof STREAM_NAMES)[number];

/** Streams re-read whole each run and merged (`loadEntities` with `complete`). */
export const SMALL_STREAMS = ['tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels'] as const;
export type SmallStreamName = (typeof SMALL_STREAMS)[number];

export function isStreamName(value: string): value is StreamName {
  return (STREAM_NAMES as readonly string[]).includes(value);
}

export function isSmallStream(value: string): value is SmallStreamName {
  return (SMALL_STREAMS as readonly string[]).includes(value);
}

/** Validates `--stream` values (defaults to every stream) and removes duplicates, keeping run order. */
export function resolveStreams(requested: readonly string[] | undefined): StreamName[] {
  if (!requested || requested.length === 0) return [...STREAM_NAMES];
  const unknown = requested.filter((s) => !isStreamName(s));
  if (unknown.length > 0) {
    throw new ConfigError(`Unknown stream ${unknown.map((s) => `"${s}"`).join(', ')}; use one of: ${STREAM_NAMES.join(', ')}.`);
  }
  return STREAM_NAMES.filter((s) => requested.includes(s));
}

export { streamWorkflowId, syncWorkflowId, SYNC_WORKFLOW_ID } from '../../workflows/sync-ids.js';
