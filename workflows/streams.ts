// The stream names, once for the workflows, the activities and the command line. Consts and types
// only, so the workflow sandbox may import it.

/**
 * Every stream crmsync pulls, in the order a run starts them. Funnel subscribers and reports read
 * the funnel and campaign listings themselves, so streams do not wait on each other.
 */
export const STREAMS = ['contacts', 'tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels', 'funnel_subscribers', 'reports'] as const;

export type StreamName = (typeof STREAMS)[number];

/** Streams re-read whole each run and merged (`loadEntities` with `complete`). */
export const SMALL_STREAMS = ['tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels'] as const satisfies readonly StreamName[];
export type SmallStreamName = (typeof SMALL_STREAMS)[number];

export function isStreamName(value: string): value is StreamName {
  return (STREAMS as readonly string[]).includes(value);
}

export function isSmallStream(value: string): value is SmallStreamName {
  return (SMALL_STREAMS as readonly string[]).includes(value);
}

/** The names a run rejects, or an empty list. */
export function unknownStreams(requested: readonly string[]): string[] {
  return requested.filter((s) => !isStreamName(s));
}

/** One message for `--stream` and the workflow input, naming the fix. */
export function unknownStreamsMessage(unknown: readonly string[]): string {
  return `Unknown stream ${unknown.map((s) => `"${s}"`).join(', ')}; use one of: ${STREAMS.join(', ')}.`;
}
