/**
 * `fn` over every item, at most `lanes` at once, results in the items' order. After a failure no
 * further item starts; the error is thrown once the running ones have settled, so nothing is still
 * requesting after the caller reports the failure. For independent CRM requests, which the
 * client's rate limiter paces whatever the lanes.
 */
export async function inLanes<T, R>(items: readonly T[], lanes: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!(Number.isSafeInteger(lanes) && lanes > 0)) throw new RangeError(`lanes must be a positive integer, got ${lanes}`);
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  if (failure) throw failure.err;
  return results;
}
