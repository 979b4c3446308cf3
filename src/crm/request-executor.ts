import type { Logger } from '../logger.js';
import { classifyErrorResponse, parseSuccessBody } from './classify-response.js';
import { CrmError, RateLimitedError } from './errors.js';
import type { RateLimiter } from './rate-limiter.js';
import type { HttpRequest, Transport } from './transport.js';

export interface ClientStats {
  /** HTTP requests sent (each retry counts). */
  requests: number;
  /** Failures classified retryable (whether the client retried them itself or passed them on). */
  retriesAdvised: number;
  status429: number;
  /** Quick retries the client made itself. */
  retries: number;
}

export interface CallOptions {
  /** A 2xx with an empty body yields null instead of an error (default for writes; GET /lists/{id} on the real deployment). */
  allowEmpty?: boolean;
  /** Safe to repeat on a transient failure (GETs are, by default). */
  idempotent?: boolean;
}

export interface RetryPolicy {
  /** Quick retries per request on transient failures (default 2). Temporal owns longer retries. */
  maxRetries: number;
  /** Largest wait the client sits out itself; longer Retry-After values are passed to the caller. */
  maxWaitMs: number;
  baseDelayMs: number;
}

export type Execute = (req: HttpRequest, opts?: CallOptions) => Promise<unknown>;

/**
 * Runs one logical call: rate-limiter ticket, send, classify, and at most `maxRetries` quick retries
 * of transient failures (idempotent requests; 429s for any method, since the server did not act).
 */
export function createExecutor(deps: {
  transport: Transport;
  limiter: RateLimiter;
  logger: Logger;
  stats: ClientStats;
  retry: RetryPolicy;
  sleep?: (ms: number) => Promise<void>;
}): Execute {
  const { transport, limiter, logger, stats, retry } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  async function once(req: HttpRequest, opts: CallOptions): Promise<unknown> {
    const ticket = await limiter.acquire(req.signal);
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
    if (res.statusCode === 429) {
      stats.status429++;
      const err = classifyErrorResponse({ method: req.method, path: req.path, statusCode: 429, headers: res.headers, body: transport.redact(res.body) });
      ticket.release({ kind: 'rateLimited', retryAfterMs: err.retryAfterMs });
      throw err;
    }
    ticket.release(res.statusCode >= 500 ? { kind: 'error' } : { kind: 'ok', latencyMs });
    logger.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(latencyMs) }, 'crm request');
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return parseSuccessBody(res.body, {
        method: req.method,
        path: req.path,
        statusCode: res.statusCode,
        contentType: header(res.headers['content-type']),
        allowEmpty: opts.allowEmpty ?? req.method !== 'GET',
      });
    }
    throw classifyErrorResponse({ method: req.method, path: req.path, query: req.query, statusCode: res.statusCode, headers: res.headers, body: transport.redact(res.body) });
  }

  return async function execute(req, opts = {}) {
    const idempotent = opts.idempotent ?? req.method === 'GET';
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(req, opts);
      } catch (e) {
        if (!(e instanceof CrmError) || !e.retryable || req.signal?.aborted) throw e;
        stats.retriesAdvised++;
        const canRepeat = idempotent || e instanceof RateLimitedError;
        const wait = e.retryAfterMs ?? retry.baseDelayMs * 3 ** attempt;
        if (!canRepeat || attempt >= retry.maxRetries || wait > retry.maxWaitMs) throw e;
        stats.retries++;
        logger.warn({ method: req.method, path: req.path, code: e.code, attempt: attempt + 1, waitMs: wait }, 'crm request failed, retrying');
        // A 429 already paused the limiter for Retry-After; waiting here too would double it.
        if (!(e instanceof RateLimitedError)) await sleep(wait);
      }
    }
  };
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
