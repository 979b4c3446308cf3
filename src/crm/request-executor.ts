import type { Logger } from '../logger.js';
import { redact } from '../secret.js';
import { classifyErrorResponse, looksLikeHtml, parseSuccessBody } from './classify-response.js';
import { CrmError, NetworkError } from './errors.js';
import type { RateLimiter } from './rate-limiter.js';
import type { HttpRequest, Transport } from './transport.js';

export interface ClientStats {
  /** HTTP requests sent (each retry counts). */
  requests: number;
  /** Failures classified retryable (whether the client repeated them itself or passed them on). */
  retriesAdvised: number;
  status429: number;
  /** Immediate repeats the client made itself (only after a reset connection). */
  retries: number;
}

export interface CallOptions {
  /** A 2xx with an empty body yields null instead of an error (default for writes; GET /lists/{id} on the real deployment). */
  allowEmpty?: boolean;
  /** Safe to repeat on a transient failure (GETs are, by default). */
  idempotent?: boolean;
  /**
   * Resolve with the 2xx body as text, unparsed: the caller reads it (contact pages, which the
   * warehouse parses). An empty body is still an error; any other check is the caller's.
   */
  raw?: boolean;
}

export interface RetryPolicy {
  /**
   * Immediate repeats of an idempotent request whose connection was reset before any response:
   * 0 or 1 (default 1; larger values count as 1). Everything else is classified and thrown, because
   * Temporal owns retries: a loop here would multiply with its attempts.
   */
  maxRetries: number;
}

/** Undici and Node codes for a connection the server closed before it answered. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

export type Execute = (req: HttpRequest, opts?: CallOptions) => Promise<unknown>;

/**
 * Runs one logical call: rate-limiter ticket, send, classify. The only repeat is one immediate
 * resend of an idempotent request whose pooled connection was reset before any response (a
 * keep-alive socket the server had just closed); 5xx, 429 and timeouts are thrown with their
 * `retryable`/`retryAfterMs` for the activity's retry policy.
 */
export function createExecutor(deps: { transport: Transport; limiter: RateLimiter; logger: Logger; stats: ClientStats; retry: RetryPolicy }): Execute {
  const { transport, limiter, logger, stats } = deps;
  const maxRetries = Math.max(0, Math.min(1, Math.floor(deps.retry.maxRetries)));

  async function once(req: HttpRequest, opts: CallOptions): Promise<unknown> {
    const ticket = await limiter.acquire(req.signal, req.priority);
    const started = performance.now();
    stats.requests++;
    let res;
    try {
      res = await transport.send(req);
    } catch (e) {
      ticket.release({ kind: 'error' });
      throw e;
    }
    const latencyMs = performance.now() - started;
    // The credentials, and any secret the request carried (a webhook's), out of what messages quote.
    const scrub = (text: string): string => (req.secrets?.length ? redact(transport.redact(text), req.secrets) : transport.redact(text));
    if (res.statusCode === 429) {
      stats.status429++;
      const err = classifyErrorResponse({ method: req.method, path: req.path, statusCode: 429, headers: res.headers, body: scrub(res.body) });
      ticket.release({ kind: 'rateLimited', retryAfterMs: err.retryAfterMs });
      throw err;
    }
    ticket.release(res.statusCode >= 500 ? { kind: 'error' } : { kind: 'ok', latencyMs });
    logger.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(latencyMs) }, 'crm request');
    if (res.statusCode >= 200 && res.statusCode < 300) {
      // An HTML page is refused here, where the credentials are known, rather than by the raw reader.
      if (opts.raw && res.body.trim() !== '' && !looksLikeHtml(res.body)) return res.body;
      return parseSuccessBody(res.body, {
        method: req.method,
        path: req.path,
        statusCode: res.statusCode,
        contentType: header(res.headers['content-type']),
        allowEmpty: opts.allowEmpty ?? req.method !== 'GET',
        redact: scrub,
      });
    }
    throw classifyErrorResponse({ method: req.method, path: req.path, query: req.query, statusCode: res.statusCode, headers: res.headers, body: scrub(res.body) });
  }

  return async function execute(req, opts = {}) {
    const idempotent = opts.idempotent ?? req.method === 'GET';
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(req, opts);
      } catch (e) {
        if (!(e instanceof CrmError) || !e.retryable || req.signal?.aborted) throw e;
        stats.retriesAdvised++;
        if (!idempotent || attempt >= maxRetries || !isConnectionReset(e)) throw e;
        stats.retries++;
        logger.warn({ method: req.method, path: req.path, code: e.code }, 'crm connection reset before a response, resending once');
      }
    }
  };
}

/** The server closed the connection before any response: the request may not have reached it. */
export function isConnectionReset(e: CrmError): boolean {
  const code = (e.cause as { code?: unknown } | undefined)?.code;
  return e instanceof NetworkError && typeof code === 'string' && RESET_CODES.has(code);
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
