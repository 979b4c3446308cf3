import { CrmsyncError } from '../errors.js';

export interface RetryOptions {
  /** Tries, the first included (default 6). */
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * For CRM calls made outside an activity (the CLI's pre-flight and `verify`), where Temporal
 * cannot own the retries and the client makes none of its own (one resend of a reset connection
 * aside): a call that fails with a retryable error (5xx, 429, a database deadlock) is made again
 * after the server's Retry-After or a growing pause, up to `attempts` times; any other error ends
 * it at once.
 */
export async function retryOutsideTemporal<R>(fn: () => Promise<R>, options: RetryOptions = {}): Promise<R> {
  const attempts = options.attempts ?? 6;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof CrmsyncError && err.retryable) || attempt >= attempts) throw err;
      await sleep(err.retryAfterMs ?? Math.min(250 * 2 ** (attempt - 1), 5_000));
    }
  }
}
