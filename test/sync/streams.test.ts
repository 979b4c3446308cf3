import { describe, expect, it } from 'vitest';
import { isSmallStream, SMALL_STREAMS, STREAMS, unknownStreams, type StreamName } from '../../workflows/streams.js';
import type { StreamWorkflowInput, SyncWorkflowInput } from '../../workflows/sync-types.js';
import { startOrder } from '../../src/sync/streams.js';

describe('stream names', () => {
  it('are one list, typed into the workflow inputs', () => {
    // The compiler rejects a misspelt stream where a workflow input is written (typecheck runs on tests).
    // @ts-expect-error 'contact' is not a StreamName
    const input: SyncWorkflowInput = { streams: ['contact'], warehouseTaskQueue: 'q' };
    // @ts-expect-error a stream workflow takes one StreamName
    const stream: StreamWorkflowInput['stream'] = 'tag';
    // What comes in untyped (JSON from another client) is caught at run time by the same list.
    expect(unknownStreams([...input.streams, stream, 'contacts'])).toEqual(['contact', 'tag']);
  });

  it('small streams are streams, and only the re-read-whole ones', () => {
    const small: readonly StreamName[] = SMALL_STREAMS;
    expect(small.every((s) => STREAMS.includes(s))).toBe(true);
    expect(STREAMS.filter(isSmallStream)).toEqual([...SMALL_STREAMS]);
    expect(isSmallStream('contacts')).toBe(false);
  });
});

describe('startOrder', () => {
  it('starts the long chains first (the server starts children one after another), then the rest in run order', () => {
    expect(startOrder([...STREAMS])).toEqual(['contacts', 'funnel_subscribers', 'reports', 'tags', 'lists', 'custom_fields', 'companies', 'campaigns', 'funnels']);
    expect(startOrder(['tags', 'reports', 'lists'])).toEqual(['reports', 'tags', 'lists']);
    expect(startOrder([])).toEqual([]);
  });
});
