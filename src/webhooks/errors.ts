import { CrmsyncError } from '../errors.js';

/** The spool could not record a delivery durably; the receiver answers 503 so the CRM retries. */
export class SpoolUnavailableError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('WEBHOOK_SPOOL_UNAVAILABLE', message, { retryable: true, retryAfterMs: 5_000, ...options });
  }
}

/** The webhook secrets file is missing, unreadable or malformed. */
export class WebhookSecretsError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('WEBHOOK_SECRETS_INVALID', message, options);
  }
}

/** The applier could not apply a batch; it retries the same batch later. */
export class WebhookApplyError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown; retryable?: boolean; retryAfterMs?: number } = {}) {
    super('WEBHOOK_APPLY_FAILED', message, { retryable: options.retryable ?? true, cause: options.cause, ...(options.retryAfterMs !== undefined ? { retryAfterMs: options.retryAfterMs } : {}) });
  }
}
