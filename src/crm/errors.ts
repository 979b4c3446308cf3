import { CrmsyncError } from '../errors.js';

/**
 * The CRM client's error taxonomy. Every failure talking to the CRM is a CrmError with a stable
 * `code`, the HTTP `statusCode` when there was a response, and `retryable`/`retryAfterMs` for
 * Temporal's retry policy. Messages name the fix and never carry credentials.
 */
export class CrmError extends CrmsyncError {
  readonly statusCode: number | undefined;
  /** The request as "METHOD /path" (no query string, no host, no credentials). */
  readonly route: string | undefined;

  constructor(code: string, message: string, options: { statusCode?: number; route?: string; retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {}) {
    super(code, message, options);
    this.statusCode = options.statusCode;
    this.route = options.route;
  }
}

type Opts = { statusCode?: number; route?: string; retryAfterMs?: number; cause?: unknown };

export class AuthenticationError extends CrmError {
  constructor(message: string, opts: Opts = {}) {
    super('CRM_UNAUTHORIZED', message, { ...opts, retryable: false });
  }
}

export class ForbiddenError extends CrmError {
  /** Capabilities of which the API user needs at least one (from the interface's capability table). */
  readonly capabilities: readonly string[];
  constructor(message: string, capabilities: readonly string[], opts: Opts = {}) {
    super('CRM_FORBIDDEN', message, { ...opts, retryable: false });
    this.capabilities = capabilities;
  }
}

export class NotFoundError extends CrmError {
  /** True when the route itself does not exist (wrong base URL, missing plugin), not just the record. */
  readonly routeMissing: boolean;
  constructor(message: string, routeMissing: boolean, opts: Opts = {}) {
    super('CRM_NOT_FOUND', message, { ...opts, retryable: false });
    this.routeMissing = routeMissing;
  }
}

export class DuplicateError extends CrmError {
  readonly fields: readonly string[];
  constructor(message: string, fields: readonly string[], opts: Opts = {}) {
    super('CRM_DUPLICATE', message, { ...opts, retryable: false });
    this.fields = fields;
  }
}

export class ValidationError extends CrmError {
  /** Field name to the server's messages for it. */
  readonly fields: Readonly<Record<string, string[]>>;
  /** The server's own message, tags stripped (the interface's 422 names the field only there). */
  readonly serverMessage: string | undefined;
  constructor(message: string, fields: Readonly<Record<string, string[]>>, opts: Opts = {}, serverMessage?: string) {
    super('CRM_VALIDATION', message, { ...opts, retryable: false });
    this.fields = fields;
    this.serverMessage = serverMessage;
  }
}

/**
 * 423: the real deployment's way of reporting an exception (SQL, date parsing) raised on the server.
 * Raised for one caused by the request itself, so repeating it cannot help; `parameter` names the
 * query parameter the server choked on when it can be told.
 */
export class ServerExceptionError extends CrmError {
  readonly parameter: string | undefined;
  constructor(message: string, opts: Opts & { parameter?: string } = {}) {
    super('CRM_SERVER_EXCEPTION', message, { ...opts, retryable: false });
    this.parameter = opts.parameter;
  }
}

/**
 * 423 for a transient database conflict (a deadlock or a lock wait timeout): the server asks for the
 * transaction to be restarted, so the request is retryable (by Temporal's policy, with backoff).
 */
export class DatabaseBusyError extends CrmError {
  constructor(message: string, opts: Opts = {}) {
    super('CRM_DATABASE_BUSY', message, { ...opts, retryable: true });
  }
}

export class RateLimitedError extends CrmError {
  constructor(message: string, opts: Opts = {}) {
    super('CRM_RATE_LIMITED', message, { ...opts, retryable: true });
  }
}

export class ServerError extends CrmError {
  constructor(message: string, opts: Opts = {}) {
    super('CRM_SERVER_ERROR', message, { ...opts, retryable: true });
  }
}

export class NetworkError extends CrmError {
  constructor(message: string, opts: Opts = {}) {
    super('CRM_NETWORK', message, { ...opts, retryable: true });
  }
}

export type BadResponseKind = 'truncated' | 'invalid_json' | 'html' | 'empty' | 'schema' | 'too_large';

/** A response the client could not use. Truncated or garbled bodies are retryable; the others are not. */
export class BadResponseError extends CrmError {
  readonly kind: BadResponseKind;
  constructor(message: string, kind: BadResponseKind, opts: Opts = {}) {
    super('CRM_BAD_RESPONSE', message, { ...opts, retryable: kind === 'truncated' || kind === 'invalid_json' });
    this.kind = kind;
  }
}

export class InsecureTransportError extends CrmError {
  constructor(message: string) {
    super('CRM_INSECURE_TRANSPORT', message, { retryable: false });
  }
}

/** Any other HTTP status the interface does not describe (for example 405, 410). */
export class UnexpectedStatusError extends CrmError {
  constructor(message: string, opts: Opts = {}) {
    super('CRM_UNEXPECTED_STATUS', message, { ...opts, retryable: false });
  }
}

/** A caller passed an argument the client will not send (bad page size, id, option). */
export class CrmArgumentError extends CrmError {
  constructor(message: string) {
    super('CRM_INVALID_ARGUMENT', message, { retryable: false });
  }
}
