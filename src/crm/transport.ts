import { Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import { ConfigError } from '../errors.js';
import { redact, type Secret } from '../secret.js';
import { BadResponseError, CrmArgumentError, CrmError, InsecureTransportError, NetworkError } from './errors.js';

export type QueryValue = string | number | boolean | undefined | null | ReadonlyArray<string | number>;

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the base URL, starting with `/`. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  signal?: AbortSignal;
  /** Place among requests waiting for the rate limiter: lower first (`RateLimiter.acquire`). */
  priority?: number;
  /** Secrets in the body (a webhook's), kept out of error messages should the server echo them. */
  secrets?: readonly Secret[];
}

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface TransportTimeouts {
  /** TCP + TLS connect (default 10 s). */
  connectMs?: number;
  /** Until the response headers arrive (default 60 s: some reports are slow). */
  headersMs?: number;
  /** Longest silence while reading the body (default 60 s). */
  bodyMs?: number;
}

export interface TransportOptions {
  baseUrl: string;
  username: string;
  password: Secret;
  allowInsecureHttp?: boolean;
  /** Send PUT/PATCH/DELETE as POST with X-HTTP-Method-Override (for hosts that block those verbs). */
  methodOverride?: boolean;
  connections?: number;
  timeouts?: TransportTimeouts;
  /** Largest response body accepted (default 32 MiB). */
  maxBodyBytes?: number;
}

export interface Transport {
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Removes credentials from text meant for messages and logs. */
  redact(text: string): string;
  readonly origin: string;
  close(): Promise<void>;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Validates the base URL: https, or http only to loopback (or when explicitly allowed); no credentials in it. */
export function checkBaseUrl(baseUrl: string, allowInsecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    // Never echo the value: a malformed URL may still carry user:password@ or a token.
    throw new ConfigError('CRM_BASE_URL is not a valid URL; use for example https://crm.example.com/wp-json/fluent-crm/v2');
  }
  if (url.username || url.password) {
    throw new ConfigError('CRM_BASE_URL must not contain credentials; remove user:password@ and set CRM_USERNAME / CRM_PASSWORD');
  }
  if (url.hash || (url.search && restRouteOf(url) === undefined)) {
    throw new ConfigError(
      'CRM_BASE_URL must not have a fragment or a query string other than ?rest_route=/fluent-crm/v2 (a site without pretty permalinks); credentials go in CRM_USERNAME / CRM_PASSWORD, so remove everything else after the path',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`CRM_BASE_URL must use https (got ${url.protocol})`);
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname) && !allowInsecureHttp) {
    throw new InsecureTransportError(`Refusing to send CRM credentials over plain http to ${url.host}: use https in CRM_BASE_URL, or set CRM_ALLOW_INSECURE_HTTP=1 if this network is trusted`);
  }
  return url;
}

/**
 * The REST route of a base URL of the form `https://site/?rest_route=/fluent-crm/v2` (WordPress
 * without pretty permalinks), when that is its only query parameter; undefined otherwise.
 */
export function restRouteOf(url: URL): string | undefined {
  const keys = [...url.searchParams.keys()];
  const route = url.searchParams.get('rest_route');
  if (keys.length !== 1 || route === null || !route.startsWith('/')) return undefined;
  return route.replace(/\/+$/, '');
}

/**
 * The request target for a call: `<base path><path><query>`, or on a `rest_route` base URL
 * `<base path>?rest_route=<route><path>&<query>` (the route in the parameter, the query after it).
 */
export function requestTarget(base: URL, path: string, query: Record<string, QueryValue> | undefined): string {
  const route = restRouteOf(base);
  const qs = buildQuery(query);
  if (route === undefined) return `${base.pathname.replace(/\/+$/, '')}${path}${qs}`;
  const target = encodeURIComponent(`${route}${path}`).replace(/%2F/gi, '/');
  return `${base.pathname}?rest_route=${target}${qs ? `&${qs.slice(1)}` : ''}`;
}

/** Characters that form encoding (URLSearchParams) leaves as they are. */
const FORM_SAFE = /^[\w*.-]*$/;

export function buildQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  // Joined by hand when every name and value needs no escaping (page numbers, sort keys): the same
  // string URLSearchParams gives, without it, on every request.
  let plain = '';
  for (const k of Object.keys(query)) {
    const v = query[k];
    if (v === undefined || v === null) continue;
    if (Array.isArray(v) || !FORM_SAFE.test(k)) return encodeQuery(query);
    const text = String(v);
    if (!FORM_SAFE.test(text)) return encodeQuery(query);
    plain += `${plain ? '&' : '?'}${k}=${text}`;
  }
  return plain;
}

function encodeQuery(query: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) params.append(`${k}[]`, String(x));
    else params.append(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

export function createTransport(opts: TransportOptions): Transport {
  const url = checkBaseUrl(opts.baseUrl, opts.allowInsecureHttp ?? false);
  const token = Buffer.from(`${opts.username}:${opts.password.reveal()}`).toString('base64');
  const authorization = `Basic ${token}`;
  const secrets = [opts.password, token];
  const maxBodyBytes = opts.maxBodyBytes ?? 32 * 1024 * 1024;
  // PHP's default post_max_size is 8 MB; a body near that is a mistake upstream, not a request to send.
  const maxRequestBytes = 4 * 1024 * 1024;
  const t = opts.timeouts ?? {};
  const pool = new Pool(url.origin, {
    connections: Math.max(1, opts.connections ?? 8),
    pipelining: 1,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connect: { timeout: t.connectMs ?? 10_000 },
    headersTimeout: t.headersMs ?? 60_000,
    bodyTimeout: t.bodyMs ?? 60_000,
  });
  const scrub = (s: string) => redact(s, secrets);

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const route = `${req.method} ${req.path}`;
    const override = opts.methodOverride && req.method !== 'GET' && req.method !== 'POST';
    const headers: Record<string, string> = {
      authorization,
      accept: 'application/json',
      'user-agent': 'crmsync/0.1',
    };
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      if (Buffer.byteLength(body) > maxRequestBytes) {
        throw new CrmArgumentError(`The request body for ${route} is larger than ${maxRequestBytes} bytes; send less per request`);
      }
      headers['content-type'] = 'application/json';
    }
    if (override) headers['x-http-method-override'] = req.method;
    let res: Dispatcher.ResponseData;
    try {
      res = await pool.request({
        path: requestTarget(url, req.path, req.query),
        method: override ? 'POST' : req.method,
        headers,
        body,
        signal: req.signal,
      });
    } catch (cause) {
      throw networkError(cause, route, 'request', req);
    }
    const text = await readBody(res, route, req.signal);
    return { statusCode: res.statusCode, headers: res.headers, body: text };
  }

  async function readBody(res: Dispatcher.ResponseData, route: string, signal: AbortSignal | undefined): Promise<string> {
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      // Nobody reads this body: destroying it emits an abort error, which unheard would be an
      // uncaught exception that ends the worker.
      res.body.on('error', () => undefined);
      res.body.destroy();
      throw tooLarge(route, res.statusCode, declared);
    }
    if (Number.isFinite(declared)) {
      // The length is known and within the cap (undici reads no more than it): read the body in one
      // go, as undici's own body mixins do, instead of a promise per chunk.
      try {
        return await res.body.text();
      } catch (cause) {
        throw bodyError(cause, res.statusCode, route, signal, `before its declared ${declared} bytes`);
      }
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxBodyBytes) {
          res.body.destroy();
          throw tooLarge(route, res.statusCode, size);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (cause) {
      throw bodyError(cause, res.statusCode, route, signal, `after ${size} bytes`);
    }
    const buf = Buffer.concat(chunks, size);
    // A UTF-8 byte order mark (a PHP file saved with one) is skipped, as undici's text() does above.
    return buf.toString('utf8', size > 2 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0);
  }

  function bodyError(cause: unknown, statusCode: number, route: string, signal: AbortSignal | undefined, where: string): CrmError {
    if (cause instanceof BadResponseError) return cause;
    if (signal?.aborted) return new CrmError('CRM_REQUEST_ABORTED', `${route} was cancelled by the caller`, { route, cause, retryable: false });
    if (cause instanceof undiciErrors.BodyTimeoutError) return networkError(cause, route, 'body');
    return new BadResponseError(`The response to ${route} (${statusCode}) was cut off ${where} (${scrub(describe(cause))}); the request can be retried`, 'truncated', {
      statusCode,
      route,
      cause,
    });
  }

  function tooLarge(route: string, statusCode: number, size: number): BadResponseError {
    return new BadResponseError(`The response to ${route} is larger than ${maxBodyBytes} bytes (${size}); request smaller pages (per_page)`, 'too_large', { statusCode, route });
  }

  function networkError(cause: unknown, route: string, phase: 'request' | 'body', req?: HttpRequest): CrmError {
    const code = (cause as { code?: string } | undefined)?.code;
    const what =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? `connecting to ${url.host} timed out`
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? 'no response headers in time'
          : code === 'UND_ERR_BODY_TIMEOUT'
            ? 'the response body stalled'
            : code === 'ECONNREFUSED'
              ? `${url.host} refused the connection`
              : code === 'ENOTFOUND'
                ? `host ${url.hostname} not found`
                : phase === 'request'
                  ? 'the connection failed'
                  : 'the connection dropped';
    if (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED') {
      return new CrmError('CRM_CLIENT_CLOSED', `${route} was sent after the CRM client was closed; create a new client`, { route, cause, retryable: false });
    }
    if (req?.signal?.aborted || code === 'UND_ERR_ABORTED') {
      return new CrmError('CRM_REQUEST_ABORTED', `${route} was cancelled by the caller`, { route, cause, retryable: false });
    }
    return new NetworkError(`${route}: ${what} (${scrub(describe(cause))}); check CRM_BASE_URL and the network, the request can be retried`, {
      route,
      cause,
    });
  }

  return {
    send,
    redact: scrub,
    origin: url.origin,
    async close() {
      await pool.close();
    },
  };
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: string }).code;
    return code ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}
