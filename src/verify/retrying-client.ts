import { CrmsyncError } from '../errors.js';
import type { VerifyCrmClient } from './verify-deps.js';

export interface RetryOptions {
  /** Tries per call, the first included (default 6). */
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
}

const RESOURCES = ['contacts', 'tags', 'lists', 'customFields', 'companies', 'campaigns', 'funnels'] as const;

/**
 * Verify runs in the CLI, not in an activity, so Temporal cannot own its retries and the client
 * makes none of its own (one resend of a reset connection aside). This wrapper is verify's retry
 * owner: a call that fails with a retryable error (5xx, 429, a database deadlock) is made again
 * after the server's Retry-After or a growing pause, up to `attempts` times; any other error
 * ends the call at once. The paginator is untouched: it calls the wrapped page fetchers.
 */
export function retryingVerifyClient(client: VerifyCrmClient, options: RetryOptions = {}): VerifyCrmClient {
  const attempts = options.attempts ?? 6;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const retrying =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await fn(...args);
        } catch (err) {
          if (!(err instanceof CrmsyncError && err.retryable) || attempt >= attempts) throw err;
          await sleep(err.retryAfterMs ?? Math.min(250 * 2 ** (attempt - 1), 5_000));
        }
      }
    };
  const wrapped: Record<string, unknown> = { paginate: client.paginate };
  for (const name of RESOURCES) {
    const resource = client[name] as unknown as Record<string, unknown>;
    wrapped[name] = Object.fromEntries(
      Object.entries(resource).map(([key, value]) => [key, typeof value === 'function' ? retrying((value as (...a: unknown[]) => Promise<unknown>).bind(resource)) : value]),
    );
  }
  return wrapped as unknown as VerifyCrmClient;
}
