import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { CrmsyncError } from '../src/errors.js';

/**
 * The one place where errors become Temporal failures. A CrmsyncError keeps its `code` as the
 * failure type (so workflows and the CLI can branch on it), `retryable: false` stops Temporal's
 * retries, and a server-given `retryAfterMs` overrides the retry policy's next delay. Anything
 * else is an unexpected bug: passed through, so Temporal retries it under the policy.
 */
export function toApplicationFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  // A request aborted by the activity's cancellation: the activity ends cancelled, not failed (the
  // worker reports a CancelledFailure thrown after a cancel as a cancellation).
  if (err instanceof CrmsyncError && err.code === 'CRM_REQUEST_ABORTED') return new CancelledFailure(err.message, undefined, err);
  if (err instanceof CrmsyncError) {
    return ApplicationFailure.create({
      type: err.code,
      message: err.message,
      nonRetryable: !err.retryable,
      nextRetryDelay: err.retryable && err.retryAfterMs !== undefined ? err.retryAfterMs : undefined,
      cause: err.cause instanceof Error ? err.cause : undefined,
    });
  }
  return err;
}

/** Wraps every activity of a factory so that its errors are classified by `toApplicationFailure`. */
export function withFailureClassification<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw toApplicationFailure(err);
      }
    };
  }
  return wrapped as T;
}
