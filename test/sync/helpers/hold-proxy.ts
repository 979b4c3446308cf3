import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HoldProxy {
  /** The simulator's base URL as seen through the proxy. */
  baseUrl: string;
  /** What the proxy saw, in order: `held <path>`, `closed by the client while held`, `released`. */
  events: string[];
  /** Resolves once `n` requests are held. */
  heldAtLeast(n: number): Promise<void>;
  /** Resolves once the client has closed the connection of a held request. */
  closedWhileHeld(): Promise<void>;
  /** Forwards the held requests (and every later one) to the simulator. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A relay in front of the simulator that holds the requests `hold` picks, unanswered, until
 * released: a response slowed without limit, so a test can cancel while a request is in flight
 * and see whether the client closed the connection, by the order of events rather than by time.
 */
export async function startHoldProxy(target: string, hold: (method: string, path: string) => boolean): Promise<HoldProxy> {
  const upstream = new URL(target);
  const events: string[] = [];
  const waiting: Array<() => void> = [];
  const listeners = new Set<() => void>();
  const notify = (event: string): void => {
    events.push(event);
    for (const l of [...listeners]) l();
  };
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!done()) return;
        listeners.delete(check);
        resolve();
      };
      listeners.add(check);
      check();
    });
  let released = false;
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', upstream.origin).pathname;
    if (released || !hold(req.method ?? 'GET', path)) {
      forward(req, res);
      return;
    }
    res.on('close', () => {
      if (!res.headersSent) notify('closed by the client while held');
    });
    waiting.push(() => forward(req, res));
    notify(`held ${req.method} ${path}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    events,
    heldAtLeast: (n) => until(() => events.filter((e) => e.startsWith('held ')).length >= n),
    closedWhileHeld: () => until(() => events.includes('closed by the client while held')),
    release: () => {
      released = true;
      notify('released');
      for (const go of waiting.splice(0)) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
