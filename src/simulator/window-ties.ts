import { createRng, hash32 } from './rng.js';

/**
 * The rows at [offset, offset + perPage) of `ordered`, each run of rows sharing a sort value that
 * the window touches in an order of the window's own. A database ordering by a column alone (no
 * tie-breaker, as fluentcrm-2.9 sorts: fixtures site-ny README, "Sorting") may order tied rows
 * differently for each LIMIT window; where the run sits does not move, only its order inside.
 */
export function windowWithTies(ordered: readonly number[], offset: number, perPage: number, value: (id: number) => string | number | undefined): number[] {
  const end = Math.min(ordered.length, offset + perPage);
  const out: number[] = [];
  const random = createRng(hash32(offset, perPage));
  for (let i = offset; i < end;) {
    const v = value(ordered[i]!);
    let lo = i;
    while (lo > 0 && value(ordered[lo - 1]!) === v) lo--;
    let hi = i + 1;
    while (hi < ordered.length && value(ordered[hi]!) === v) hi++;
    const run = ordered.slice(lo, hi);
    for (let k = run.length - 1; k > 0; k--) {
      const j = Math.floor(random() * (k + 1));
      [run[k], run[j]] = [run[j]!, run[k]!];
    }
    out.push(...run.slice(i - lo, Math.min(hi, end) - lo));
    i = Math.min(hi, end);
  }
  return out;
}
