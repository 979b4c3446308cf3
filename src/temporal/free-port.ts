import { createServer } from 'node:net';

/**
 * A port that was free a moment ago on `host`. `temporal server start-dev` cannot bind port 0,
 * so we pick one; the caller retries on a lost race.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the bound port'))));
    });
  });
}
