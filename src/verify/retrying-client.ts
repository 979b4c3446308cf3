import { retryOutsideTemporal, type RetryOptions } from '../crm/retry-outside-temporal.js';
import type { VerifyCrmClient } from './verify-deps.js';

const RESOURCES = ['contacts', 'tags', 'lists', 'customFields', 'companies', 'campaigns', 'funnels'] as const;

/**
 * Verify runs in the CLI, not in an activity, so Temporal cannot own its retries: this wrapper is
 * verify's retry owner (`retryOutsideTemporal` on every resource call). The paginator is
 * untouched: it calls the wrapped page fetchers.
 */
export function retryingVerifyClient(client: VerifyCrmClient, options: RetryOptions = {}): VerifyCrmClient {
  const retrying =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      retryOutsideTemporal(() => fn(...args), options);
  const wrapped: Record<string, unknown> = { paginate: client.paginate };
  for (const name of RESOURCES) {
    const resource = client[name] as unknown as Record<string, unknown>;
    wrapped[name] = Object.fromEntries(
      Object.entries(resource).map(([key, value]) => [key, typeof value === 'function' ? retrying((value as (...a: unknown[]) => Promise<unknown>).bind(resource)) : value]),
    );
  }
  return wrapped as unknown as VerifyCrmClient;
}
