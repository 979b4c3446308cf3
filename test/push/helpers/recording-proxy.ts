import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedUpsert {
  email: string;
  startedAt: number;
  endedAt: number | undefined;
  status: number | undefined;
}

export interface RecordingProxy {
  /** The target's base URL, re-rooted on the proxy. */
  baseUrl: string;
  upserts: RecordedUpsert[];
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy in front of the simulator that notes every contact upsert (email,
 * when it started and ended, the status), so a test can tell which rows were sent more than once.
 */
export async function startRecordingProxy(targetBaseUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetBaseUrl);
  const upserts: RecordedUpsert[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let record: RecordedUpsert | undefined;
      if (req.method === 'POST' && (req.url ?? '').split('?')[0]?.endsWith('/subscribers')) {
        const email = String((JSON.parse(body.toString('utf8')) as { email?: unknown }).email ?? '').toLowerCase();
        record = { email, startedAt: Date.now(), endedAt: undefined, status: undefined };
        upserts.push(record);
      }
      const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on('end', () => {
          if (record) {
            record.status = up.statusCode;
            record.endedAt = Date.now();
          }
        });
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname}`,
    upserts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
