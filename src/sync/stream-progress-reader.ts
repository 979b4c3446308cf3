import type { StreamName } from '../../workflows/streams.js';
import type { StreamProgress } from '../../workflows/sync-types.js';

const FINAL_PHASES: ReadonlySet<StreamProgress['phase']> = new Set(['done', 'failed', 'cancelled']);

/**
 * Reads the progress of `streams` through `read`, asking only for those not yet finished: a
 * stream whose phase is final (done, failed, cancelled) changes no more, so its last progress is
 * kept and shown again. Asking a workflow that has closed makes the worker replay its whole
 * history, and a run's poll asked every stream twice a second: streams that had finished were
 * replayed over and over while the others were still running in the same process. `settled`:
 * final progress the caller knows already (from a run's result), so those are not asked either.
 */
export function createStreamProgressReader(
  streams: readonly StreamName[],
  read: (streams: readonly StreamName[]) => Promise<StreamProgress[]>,
): (settled?: readonly StreamProgress[]) => Promise<StreamProgress[]> {
  const finished = new Map<StreamName, StreamProgress>();
  return async (settled = []) => {
    for (const p of settled) if (FINAL_PHASES.has(p.phase) && streams.includes(p.stream)) finished.set(p.stream, p);
    const asked = streams.filter((s) => !finished.has(s));
    const fresh = asked.length > 0 ? await read(asked) : [];
    for (const p of fresh) if (FINAL_PHASES.has(p.phase)) finished.set(p.stream, p);
    const latest = new Map<StreamName, StreamProgress>([...finished, ...fresh.map((p): [StreamName, StreamProgress] => [p.stream, p])]);
    return streams.flatMap((s) => latest.get(s) ?? []);
  };
}
