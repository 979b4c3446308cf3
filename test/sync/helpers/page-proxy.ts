import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PageProxy {
  /** The simulator's base URL as seen through the proxy. */
  baseUrl: string;
  /** How many times each ascending contacts page was requested. */
  ascPageFetches(): Map<number, number>;
  close(): Promise<void>;
}

/**
 * A plain HTTP relay in front of the simulator that records which contacts pages a worker asks
 * for, so a test can count refetches per page (the simulator only counts per route).
 */
export async function startPageProxy(target: string): Promise<PageProxy> {
  const upstream = new URL(target);
  const fetches = new Map<number, number>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', upstream.origin);
    if (req.method === 'GET' && url.pathname.endsWith('/subscribers')) {
      const order = (url.searchParams.get('sort_type') ?? url.searchParams.get('order_type') ?? '').toLowerCase();
      if (order === 'asc') {
        const page = Number(url.searchParams.get('page') ?? '1');
        fetches.set(page, (fetches.get(page) ?? 0) + 1);
      }
    }
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    ascPageFetches: () => new Map(fetches),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
