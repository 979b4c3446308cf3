import { CrmsyncError } from '../errors.js';
import { TEXT_COLUMNS } from './map-source-row.js';

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

/**
 * Reads what the client's error taxonomy says about a failed upsert. `body` is what was sent: when
 * the CRM lists no field errors (the interface's 422 only says "the message names the field"), the
 * field is the first push field its message names.
 */
export function describeSendError(err: unknown, body?: object): SendErrorInfo {
  if (!(err instanceof CrmsyncError)) {
    return { code: 'UNEXPECTED', message: err instanceof Error ? err.message : String(err), httpStatus: null, field: null, retryable: false, retryAfterMs: undefined, fatal: true };
  }
  const extra = err as CrmsyncError & { statusCode?: unknown; fields?: unknown; serverMessage?: unknown };
  const httpStatus = typeof extra.statusCode === 'number' ? extra.statusCode : null;
  return {
    code: err.code,
    message: err.message,
    httpStatus,
    field: firstField(extra.fields) ?? (typeof extra.serverMessage === 'string' && body ? fieldNamedIn(extra.serverMessage, body) : null),
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

const PUSH_FIELDS = ['email', 'status', ...TEXT_COLUMNS, 'date_of_birth', 'tags', 'lists'];

/**
 * The push field the message names first, as a whole word (`first_name`, not `name`): a standard
 * one, or one of the body's custom values as `custom_values.<slug>`, as the local checks name it.
 * Null when it names none.
 */
export function fieldNamedIn(message: string, body: object): string | null {
  // The fields a push may send, named also when this row left them out (an empty cell).
  const candidates: [word: string, field: string][] = PUSH_FIELDS.map((f) => [f, f]);
  for (const [key, value] of Object.entries(body)) {
    if (key === '__force_update') continue;
    if (key === 'custom_values' && value !== null && typeof value === 'object') {
      for (const slug of Object.keys(value)) candidates.push([slug, `custom_values.${slug}`]);
    } else candidates.push([key, key]);
  }
  let best: { at: number; field: string } | null = null;
  for (const [word, field] of candidates) {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const at = message.search(new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`, 'i'));
    if (at >= 0 && (best === null || at < best.at || (at === best.at && field.length > best.field.length))) best = { at, field };
  }
  return best?.field ?? null;
}
