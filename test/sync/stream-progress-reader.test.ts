import { describe, expect, it } from 'vitest';
import { settledProgress } from '../../src/sync/settled-progress.js';
import { createStreamProgressReader } from '../../src/sync/stream-progress-reader.js';
import type { StreamName } from '../../workflows/streams.js';
import type { StreamPhase, StreamProgress } from '../../workflows/sync-types.js';

const progress = (stream: StreamName, phase: StreamPhase, rows = 0): StreamProgress => ({
  stream,
  runId: 'run-1',
  phase,
  pagesDone: 0,
  pagesTotal: undefined,
  rows,
  requests: 0,
  startedAtMs: 0,
  updatedAtMs: 0,
  drift: false,
});

// Issue 16: a query to a closed stream workflow makes the worker replay its history; the poll of
// a run asked every stream each time, finished or not.
describe('createStreamProgressReader', () => {
  it('asks only for streams not yet finished, and keeps showing the finished ones', async () => {
    const asked: StreamName[][] = [];
    const answers: StreamProgress[][] = [
      [progress('contacts', 'incremental'), progress('tags', 'done', 3), progress('lists', 'starting')],
      [progress('contacts', 'incremental'), progress('lists', 'failed')],
      [progress('contacts', 'done', 7)],
    ];
    const read = createStreamProgressReader(['contacts', 'tags', 'lists'], async (streams) => {
      asked.push([...streams]);
      return answers[asked.length - 1]!.filter((p) => streams.includes(p.stream));
    });
    expect((await read()).map((p) => `${p.stream} ${p.phase}`)).toEqual(['contacts incremental', 'tags done', 'lists starting']);
    expect((await read()).map((p) => `${p.stream} ${p.phase}`)).toEqual(['contacts incremental', 'tags done', 'lists failed']);
    expect((await read()).map((p) => `${p.stream} ${p.phase} ${p.rows}`)).toEqual(['contacts done 7', 'tags done 3', 'lists failed 0']);
    // Everything is final: nothing is asked any more.
    expect(await read()).toHaveLength(3);
    expect(asked).toEqual([['contacts', 'tags', 'lists'], ['contacts', 'lists'], ['contacts']]);
  });

  it('asks again for a stream that gave no answer (not started yet, or the query failed)', async () => {
    const asked: StreamName[][] = [];
    const read = createStreamProgressReader(['contacts', 'tags'], async (streams) => {
      asked.push([...streams]);
      return asked.length === 1 ? [progress('contacts', 'done')] : [progress('contacts', 'done'), progress('tags', 'done')].filter((p) => streams.includes(p.stream));
    });
    expect((await read()).map((p) => p.stream)).toEqual(['contacts']);
    expect((await read()).map((p) => p.stream)).toEqual(['contacts', 'tags']);
    expect(asked).toEqual([['contacts', 'tags'], ['tags']]);
  });

  it('does not ask for streams whose final progress the caller settled from the run result', async () => {
    const asked: StreamName[][] = [];
    const read = createStreamProgressReader(['contacts', 'tags', 'lists'], async (streams) => {
      asked.push([...streams]);
      return streams.map((s) => progress(s, 'incremental'));
    });
    await read();
    const result = { stream: 'tags' as const, mode: 'incremental' as const, drift: false, pages: 1, rows: 5, requests: 2, inserted: 0, updated: 0, unchanged: 5, deleted: 0 };
    const final = await read([settledProgress(result, 'run-1', progress('tags', 'incremental'), 0, 10), settledProgress({ ...result, stream: 'contacts', rows: 9 }, 'run-1', undefined, 0, 10)]);
    expect(final.map((p) => `${p.stream} ${p.phase} ${p.rows}`)).toEqual(['contacts done 9', 'tags done 5', 'lists incremental 0']);
    expect(asked).toEqual([['contacts', 'tags', 'lists'], ['lists']]);
  });
});
