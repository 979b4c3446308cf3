import { CrmsyncError } from '../errors.js';

export interface SendErrorInfo {
  code: string;
  message: string;
  httpStatus: number | null;
  field: string | null;
  retryable: boolean;
  retryAfterMs: number | undefined;
  /** The whole push cannot succeed (credentials, permissions): stop instead of failing every row. */
  fatal: boolean;
}

const FATAL_STATUSES = new Set([401, 403]);

/** Reads what the client's error taxonomy says about a failed upsert. */
export function describeSendError(err: unknown): SendErrorInfo {
  if (!(err instanceof CrmsyncError)) {
    return { code: 'UNEXPECTED', message: err instanceof Error ? err.message : String(err), httpStatus: null, field: null, retryable: false, retryAfterMs: undefined, fatal: true };
  }
  const extra = err as CrmsyncError & { statusCode?: unknown; fields?: unknown };
  const httpStatus = typeof extra.statusCode === 'number' ? extra.statusCode : null;
  return {
    code: err.code,
    message: err.message,
    httpStatus,
    field: firstField(extra.fields),
    retryable: err.retryable,
    retryAfterMs: err.retryAfterMs,
    fatal: httpStatus !== null && FATAL_STATUSES.has(httpStatus),
  };
}

/** Validation errors carry `{ field: [messages] }`, duplicates a list of fields. */
function firstField(fields: unknown): string | null {
  if (Array.isArray(fields)) return typeof fields[0] === 'string' ? fields[0] : null;
  if (fields !== null && typeof fields === 'object') return Object.keys(fields)[0] ?? null;
  return null;
}
