/**
 * Runs async tasks one at a time, in call order: ledger writes share one DuckDB connection while
 * several upserts are in flight.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
