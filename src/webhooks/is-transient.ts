import { CrmsyncError } from '../errors.js';

/** Waiting helps: the CRM or the warehouse is busy or down (`retryable` errors). Anything else is about the deliveries. */
export function isTransient(err: unknown): boolean {
  return err instanceof CrmsyncError && err.retryable;
}
