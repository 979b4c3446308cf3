import { capabilitiesFor } from './capabilities.js';
import {
  AuthenticationError,
  BadResponseError,
  type CrmError,
  DuplicateError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnexpectedStatusError,
  ValidationError,
} from './errors.js';
import { classifyServerException } from './classify-server-exception.js';
import { parseRetryAfter } from './retry-after.js';
import type { QueryValue } from './transport.js';

export interface ResponseFacts {
  method: string;
  /** Path relative to the base URL, without the query string. */
  path: string;
  /** The request's query, to name the parameter a server-side SQL error points at (never logged). */
  query?: Record<string, QueryValue>;
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as text (already size-limited); secrets are redacted by the caller. */
  body: string;
  nowMs?: number;
}

const SNIPPET = 160;

/** Maps a non-2xx response to the error taxonomy. The message names the fix and quotes the server briefly. */
export function classifyErrorResponse(f: ResponseFacts): CrmError {
  const route = `${f.method.toUpperCase()} ${f.path}`;
  const statusCode = f.statusCode;
  const json = tryJson(f.body);
  const obj = json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  const serverCode = typeof obj?.code === 'string' ? obj.code : undefined;
  const serverMessage = typeof obj?.message === 'string' ? stripTags(obj.message) : undefined;
  const fieldErrors = obj ? fieldErrorsOf(obj) : {};
  const quoted = serverMessage ?? (obj ? undefined : snippet(f.body));
  const says = quoted ? `; the server said: ${truncate(quoted, SNIPPET)}` : '';
  const opts = { statusCode, route };
  const retryAfterMs = parseRetryAfter(f.headers['retry-after'], f.nowMs);

  if (statusCode === 401) {
    return new AuthenticationError(
      `The CRM rejected the credentials (401 on ${route}): check CRM_USERNAME / CRM_PASSWORD (an application password of a dedicated manager account, not the login password)${says}`,
      opts,
    );
  }
  if (statusCode === 403) {
    const caps = capabilitiesFor(f.method, f.path);
    const need = caps.length ? `grant the API user ${caps.join(' or ')}` : 'grant the API user the capability this route needs';
    const companies = f.path.startsWith('/companies') ? ' (on FluentCRM the company module must also be enabled under Settings, Experimental)' : '';
    return new ForbiddenError(`The CRM user may not call ${route} (403): ${need}${companies}${says}`, caps, opts);
  }
  if (statusCode === 409 || isDuplicate(statusCode, fieldErrors, serverMessage)) {
    const fields = Object.entries(fieldErrors)
      .filter(([, rules]) => rules.some((r) => /unique|already/i.test(r.rule + r.message)))
      .map(([k]) => k);
    const what = fields.length ? `${fields.join(', ')} already in use` : 'the record already exists';
    const hint = f.path === '/subscribers' ? '; use upsert() (create with __force_update) to update the existing contact' : '';
    return new DuplicateError(`Duplicate on ${route} (${statusCode}): ${what}${hint}${says}`, fields, opts);
  }
  if (statusCode === 404 || (statusCode === 422 && serverMessage && /not found/i.test(serverMessage))) {
    const routeMissing = serverCode === 'rest_no_route';
    const msg = routeMissing
      ? `No such route ${route} (404 rest_no_route): check that CRM_BASE_URL ends with the API version segment (/v2) and that the plugin and module are installed`
      : `Not found: ${route} (${statusCode})${says}`;
    return new NotFoundError(msg, routeMissing, opts);
  }
  if (statusCode === 400 || statusCode === 422) {
    const named = Object.keys(fieldErrors);
    const flat = Object.fromEntries(Object.entries(fieldErrors).map(([k, v]) => [k, v.map((r) => r.message)]));
    const detail = named.length ? named.map((k) => `${k}: ${(flat[k] ?? []).join(' ')}`).join('; ') : truncate(quoted ?? 'invalid parameters', SNIPPET);
    const fix = named.length ? `fix field${named.length > 1 ? 's' : ''} ${named.join(', ')}` : 'fix the request parameters';
    return new ValidationError(`The CRM rejected ${route} (${statusCode}${serverCode ? ` ${serverCode}` : ''}): ${fix} (${detail})`, flat, opts, serverMessage);
  }
  if (statusCode === 423) {
    return classifyServerException({ route, statusCode, serverMessage, says, query: f.query });
  }
  if (statusCode === 429) {
    const wait = retryAfterMs === undefined ? 'no Retry-After given' : `retry after ${Math.ceil(retryAfterMs / 1000)} s`;
    return new RateLimitedError(`The CRM rate-limited ${route} (429, ${wait}); lower CRM_MAX_RPS if this persists`, {
      ...opts,
      retryAfterMs,
    });
  }
  if (statusCode >= 500) {
    const html = looksLikeHtml(f.body) ? ' (an HTML error page)' : '';
    return new ServerError(`The CRM failed on ${route} (${statusCode})${html}${says}`, { ...opts, retryAfterMs });
  }
  if (statusCode >= 300 && statusCode < 400) {
    const loc = f.headers.location;
    const where = typeof loc === 'string' ? ` to ${truncate(loc.split('?')[0]!, 200)}` : '';
    return new UnexpectedStatusError(
      `The CRM redirected ${route} (${statusCode})${where}; the client does not follow redirects (credentials must not leak to another host): set CRM_BASE_URL to the final address`,
      opts,
    );
  }
  return new UnexpectedStatusError(`Unexpected HTTP ${statusCode} from ${route}${says}`, opts);
}

/**
 * Parses a 2xx body. Empty bodies give `null` only when `allowEmpty`, else a BadResponseError.
 * `redact` removes credentials from the body before a message quotes it. JSON.parse's error is
 * not kept as a cause: its message quotes the body around the fault, which may be anything.
 */
export function parseSuccessBody(
  body: string,
  facts: { method: string; path: string; statusCode: number; contentType: string | undefined; allowEmpty?: boolean; redact?: (text: string) => string },
): unknown {
  const route = `${facts.method.toUpperCase()} ${facts.path}`;
  const opts = { statusCode: facts.statusCode, route };
  if (body.trim() === '') {
    if (facts.allowEmpty) return null;
    throw new BadResponseError(`Empty response body from ${route} (${facts.statusCode}); expected JSON`, 'empty', opts);
  }
  try {
    return JSON.parse(body);
  } catch {
    if (looksLikeHtml(body)) {
      throw new BadResponseError(
        `The CRM answered ${route} with an HTML page instead of JSON (a PHP error, a login or maintenance page, or a proxy); check CRM_BASE_URL and the site's error log. Page starts: ${snippet(facts.redact ? facts.redact(body) : body)}`,
        'html',
        opts,
      );
    }
    throw new BadResponseError(`Truncated or invalid JSON from ${route} (${body.length} bytes${facts.contentType ? `, ${facts.contentType}` : ''}); the request can be retried`, 'invalid_json', opts);
  }
}

interface RuleMessage {
  rule: string;
  message: string;
}

/** The real deployment's validation body is a bare map `{field: {rule: message}}`. */
function fieldErrorsOf(obj: Record<string, unknown>): Record<string, RuleMessage[]> {
  const out: Record<string, RuleMessage[]> = {};
  const source = obj.errors && typeof obj.errors === 'object' && !Array.isArray(obj.errors) ? (obj.errors as Record<string, unknown>) : obj;
  for (const [field, v] of Object.entries(source)) {
    if (field === 'code' || field === 'message' || field === 'data' || field === 'additional_errors') continue;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const rules = Object.entries(v as Record<string, unknown>)
        .filter(([, m]) => typeof m === 'string')
        .map(([rule, m]) => ({ rule, message: m as string }));
      if (rules.length) out[field] = rules;
    } else if (Array.isArray(v) && v.every((m) => typeof m === 'string')) {
      out[field] = v.map((m) => ({ rule: 'invalid', message: m as string }));
    }
  }
  // Spec-style body: {code, message, data: {params: {field: message}}} (WP rest_invalid_param).
  const params = (obj.data as { params?: unknown } | undefined)?.params;
  if (params && typeof params === 'object' && !Array.isArray(params)) {
    for (const [field, m] of Object.entries(params as Record<string, unknown>)) {
      if (typeof m === 'string') out[field] = [{ rule: 'invalid', message: m }];
    }
  }
  return out;
}

function isDuplicate(status: number, fields: Record<string, RuleMessage[]>, message: string | undefined): boolean {
  if (status !== 400 && status !== 422) return false;
  if (Object.values(fields).some((rules) => rules.some((r) => r.rule === 'unique'))) return true;
  return !!message && /already (exists?|taken|assigned|in use)|duplicate/i.test(message);
}

function tryJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body|<\?xml|<p>|<div|<br)/i.test(text);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', rsaquo: '›', lsaquo: '‹', hellip: '…', ndash: '–', mdash: '—' };

function stripTags(s: string): string {
  return s
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d{1,6}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return code > 31 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}

/** A short, single-line, tag-free excerpt of a (possibly HTML) body, for messages. */
export function snippet(body: string): string {
  const rawTitle = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1];
  const title = rawTitle ? stripTags(rawTitle) : '';
  const text = stripTags(body.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' '));
  const s = title && !text.startsWith(title) ? `${title}: ${text}` : text;
  return JSON.stringify(truncate(s, SNIPPET));
}
