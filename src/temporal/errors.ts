import { CrmsyncError } from '../errors.js';

/** No usable Temporal CLI: the message says how to get one. */
export class TemporalCliMissingError extends CrmsyncError {
  constructor(message: string) {
    super('TEMPORAL_CLI_MISSING', message);
  }
}

/** The embedded dev server did not start or did not become ready in time. */
export class TemporalDevServerError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('TEMPORAL_DEV_SERVER_FAILED', message, { ...options, retryable: true });
  }
}

/** A configured Temporal (TEMPORAL_ADDRESS) could not be reached. */
export class TemporalUnreachableError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('TEMPORAL_UNREACHABLE', message, { ...options, retryable: true });
  }
}
