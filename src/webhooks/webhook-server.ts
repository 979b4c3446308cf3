import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { receiveWebhook, type WebhookHandlerDeps, type WebhookResponse } from './handle-webhook-request.js';
import { DEFAULT_CONNECTION_LIMITS, guardConnections, type ConnectionLimits, type ConnectionStats } from './guard-connections.js';
import { readIncomingBody } from './read-limited-body.js';

export interface WebhookServerOptions {
  host: string;
  port: number;
  /** Path deliveries are posted to. */
  path?: string;
  handler: WebhookHandlerDeps;
  /** Readiness: the spool can take deliveries. */
  isReady: () => { ready: boolean; detail: Record<string, unknown> };
  /** Gauges sampled for /metrics. */
  gauges?: () => Record<string, number>;
  /** Timeouts and connection caps (defaults: DEFAULT_CONNECTION_LIMITS). */
  limits?: Partial<ConnectionLimits>;
  logger?: Logger;
}

export interface WebhookServer {
  /** The URL to register with the CRM (or to put behind an HTTPS proxy). */
  url: string;
  port: number;
  connections(): ConnectionStats;
  close(): Promise<void>;
}

export const DEFAULT_WEBHOOK_PATH = '/webhooks/crm';

export async function withWebhookServer<T>(options: WebhookServerOptions, fn: (server: WebhookServer) => Promise<T>): Promise<T> {
  const server = await startWebhookServer(options);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const path = options.path ?? DEFAULT_WEBHOOK_PATH;
  const { logger } = options;

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}, type = 'application/json'): void => {
    res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...headers });
    res.end(body);
  };
  // The answers to nearly every delivery (frozen, shared) are serialized once, with their head's
  // fields as a flat array (no object to copy). The body is ASCII and goes out appended to the
  // head node:http has just built, then `end()` sends both as one string in one write: `end(body)`
  // corks the socket and queues the body and an empty final chunk, which go out through node's
  // slower writev path (bench/results/notes.md, "Issue 17, writes on the sync threads and one
  // write an answer"). `_header` is node:http's own field (a string from writeHead until sent);
  // should it ever be otherwise, `end(body)`.
  const wire = new WeakMap<WebhookResponse, { body: string; headers: string[] }>();
  const answer = (res: ServerResponse, r: WebhookResponse): void => {
    if (r.headers || !Object.isFrozen(r)) return send(res, r.status, JSON.stringify(r.body), r.headers);
    let w = wire.get(r);
    if (!w) {
      const body = JSON.stringify(r.body);
      if (!/^[\x20-\x7e]*$/.test(body)) return send(res, r.status, body);
      w = { body, headers: ['content-type', 'application/json', 'content-length', String(body.length)] };
      wire.set(r, w);
    }
    res.writeHead(r.status, w.headers);
    const head = res as ServerResponse & { _header?: unknown };
    if (typeof head._header === 'string' && head._header.endsWith('\r\n\r\n')) {
      head._header += w.body;
      res.end();
    } else res.end(w.body, 'latin1');
  };

  const failed = (res: ServerResponse, err: unknown): void => {
    logger?.error({ err: { message: (err as Error).message, code: (err as { code?: string }).code } }, 'webhook handler failed');
    if (!res.headersSent) send(res, 500, JSON.stringify({ status: 'error' }));
  };

  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  let connections: () => ConnectionStats = () => ({ open: 0, mostFromOneAddress: 0, evicted: 0, refused: 0 });
  // Node checks the header and request timeouts every connectionsCheckingInterval (30 s by
  // default, which let a silent socket live 30 to 60 s): check every second instead.
  const server = createServer(
    { requestTimeout: limits.requestTimeoutMs, headersTimeout: limits.headersTimeoutMs, keepAliveTimeout: limits.keepAliveTimeoutMs, connectionsCheckingInterval: 1_000 },
    (req: IncomingMessage, res: ServerResponse) => {
      const raw = req.url ?? '/';
      const query = raw.indexOf('?');
      const url = query < 0 ? raw : raw.slice(0, query);
      if (url === path) {
        try {
          receiveWebhook(
            req.method ?? 'GET',
            req.headers,
            (limit, expected, done) => readIncomingBody(req, limit, expected, done),
            options.handler,
            (err, r) => {
              if (err === null) answer(res, r!);
              else failed(res, err);
            },
          );
        } catch (err) {
          failed(res, err);
        }
        return;
      }
      req.resume();
      // A delivery posted to another path is a misregistered URL, not a wrong method: say where to post.
      if (url !== '/healthz' && url !== '/readyz' && url !== '/metrics') return send(res, 404, JSON.stringify({ status: 'not_found', message: `Post deliveries to ${path}.` }));
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, JSON.stringify({ status: 'method_not_allowed' }), { allow: 'GET' });
      if (url === '/healthz') return send(res, 200, JSON.stringify({ status: 'ok' }));
      if (url === '/readyz') {
        const r = options.isReady();
        return send(res, r.ready ? 200 : 503, JSON.stringify({ status: r.ready ? 'ready' : 'not_ready', ...r.detail }));
      }
      const c = connections();
      send(
        res,
        200,
        options.handler.metrics.render({ ...options.gauges?.(), connections_open: c.open, connections_evicted: c.evicted, connections_refused: c.refused }),
        {},
        'text/plain; version=0.0.4',
      );
    },
  );
  // Bounded: every connection holds a socket and up to one body; the CRM needs only a few. The
  // guard closes idle connections to make room rather than refusing new ones.
  connections = guardConnections(server, limits);
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException): void => {
      const why = err.code === 'EADDRINUSE' ? 'is already in use' : err.code === 'EACCES' ? 'needs privileges' : `cannot be used (${err.code ?? err.message})`;
      reject(
        new ConfigError(`The webhook receiver cannot listen: ${options.host}:${options.port} ${why}; choose another with --port or CRMSYNC_WEBHOOK_PORT (--host or CRMSYNC_WEBHOOK_HOST).`, {
          cause: err,
        }),
      );
    };
    server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}${path}`,
    port,
    connections: () => connections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
