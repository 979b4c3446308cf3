/**
 * The one error base of crmsync. Every error that crosses a module boundary is a CrmsyncError
 * with a stable `code` (for programs), a `retryable` flag (for Temporal's retry policy) and a
 * message that names the fix (for people). Errors become Temporal failures in one place:
 * activities/to-application-failure.ts.
 */
export class CrmsyncError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  /** Milliseconds the caller should wait before retrying, when the server said so. */
  readonly retryAfterMs: number | undefined;

  constructor(code: string, message: string, options: { retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Bad configuration or options: never retryable, the message says what to change. */
export class ConfigError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('CONFIG_INVALID', message, options);
  }
}
