import { NotFoundError } from './errors.js';

/** Runs `fn`, turning "record not found" (404, or the real deployment's 422 "not found") into null. */
export async function nullIfNotFound<T>(fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch (e) {
    // A missing route is a configuration problem, not a missing record: let it surface.
    if (e instanceof NotFoundError && !e.routeMissing) return null;
    throw e;
  }
}
