import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReplayResponse {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A tiny HTTP server on 127.0.0.1 port 0 for what the simulator cannot produce: replaying captured
 * real responses byte for byte, HTML pages, HTTP-date Retry-After, oversized or stalled bodies.
 */
export interface ReplayServer {
  baseUrl: string;
  /** Sets what the server answers next (every request gets it until changed). */
  respond(r: ReplayResponse | ((req: SeenRequest, res: ServerResponse) => void)): void;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startReplayServer(basePath = '/v2'): Promise<ReplayServer> {
  let handler: ReplayResponse | ((req: SeenRequest, res: ServerResponse) => void) = { status: 200, body: '{}' };
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      if (typeof handler === 'function') return handler(seen, res);
      res.writeHead(handler.status, { 'content-type': 'application/json; charset=UTF-8', ...handler.headers });
      res.end(handler.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    respond(r) {
      handler = r;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
