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
