/** `pending`, or a rejection with the signal's reason as soon as it fires. */
export function orAborted<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return pending;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
