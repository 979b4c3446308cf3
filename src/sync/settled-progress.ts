import type { StreamProgress, StreamResult } from '../../workflows/sync-types.js';

/**
 * A finished stream's last progress, from its result: the final display after a run needs no
 * query then. A query to a closed workflow makes the worker replay its whole history, and the
 * command waited for one per stream before it could exit. `seen` is the last progress the
 * command read while the stream ran (for its start and page count), if any.
 */
export function settledProgress(result: StreamResult, runId: string, seen: StreamProgress | undefined, fallbackStartMs: number, nowMs: number): StreamProgress {
  return {
    stream: result.stream,
    runId,
    phase: 'done',
    pagesDone: seen?.pagesTotal ?? seen?.pagesDone ?? 0,
    pagesTotal: seen?.pagesTotal,
    rows: result.rows,
    requests: result.requests,
    startedAtMs: seen?.startedAtMs ?? fallbackStartMs,
    updatedAtMs: nowMs,
    drift: result.drift,
  };
}
