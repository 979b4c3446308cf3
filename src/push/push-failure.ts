import { ApplicationFailure, CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { CrmsyncError } from '../errors.js';

/**
 * A failed pushWorkflow as the error its activity raised: the innermost application failure's
 * type is the CrmsyncError code and its message names the fix (e.g. PUSH_SOURCE_INVALID). A
 * cancelled one is PUSH_CANCELLED.
 */
export function pushFailureToError(err: unknown): unknown {
  if (!(err instanceof WorkflowFailedError)) return err;
  if (err.cause instanceof CancelledFailure) {
    return new CrmsyncError('PUSH_CANCELLED', 'The push was cancelled; rows already pushed are in the ledger, and the next push of this source sends the rest.', { cause: err });
  }
  let innermost: ApplicationFailure | undefined;
  for (let e: unknown = err.cause; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure) innermost = e;
  }
  const code = innermost?.type || 'PUSH_FAILED';
  const message = innermost?.message ?? err.cause?.message ?? err.message;
  return new CrmsyncError(code, `The push failed: ${message}`, { cause: err });
}
