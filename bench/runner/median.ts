/**
 * The median of `xs`: the middle value, or the mean of the two middle values when there are an
 * even number (the upper one alone would lean every even-round figure upwards).
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of no values');
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface MedianInterval {
  low: number;
  high: number;
  /** The chance that an interval made this way covers the true median (at least the confidence asked). */
  coverage: number;
}

/**
 * A distribution-free interval for the median of what `xs` were drawn from: the k-th smallest and
 * the k-th largest value, with the largest k whose interval covers the median with at least
 * `confidence` (each value falls below the median with chance one half, so the count below is
 * binomial). Nothing is assumed about the spread, which on a shared machine is not normal. Null
 * when there are too few values for that confidence (fewer than 5 for 0.9).
 */
export function medianInterval(xs: readonly number[], confidence = 0.9): MedianInterval | null {
  const n = xs.length;
  const sorted = [...xs].sort((a, b) => a - b);
  // below[j]: the chance that at most j of n values fall below the median.
  let below = 0;
  let choose = 1;
  let found: MedianInterval | null = null;
  for (let k = 1; 2 * k <= n; k++) {
    below += choose / 2 ** n;
    choose = (choose * (n - (k - 1))) / k;
    const coverage = 1 - 2 * below;
    if (coverage < confidence) break;
    found = { low: sorted[k - 1]!, high: sorted[n - k]!, coverage };
  }
  return found;
}
