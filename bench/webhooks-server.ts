// One server under test for bench/webhooks.ts, in its own process so that it does not share a
// core with the load generator: `baseline` (node:http, HMAC check, 200) or `durable` (the real
// receiver with its fsynced spool). Prints {"url"} once listening; on SIGTERM prints its stats.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Secret } from '../src/secret.js';
import { readThreadCpuMs } from './runner/thread-cpu.js';
import { createSecretResolver } from '../src/webhooks/secret-resolver.js';
import { startWebhookService } from '../src/webhooks/webhook-service.js';

const [mode, secret, spoolDir] = process.argv.slice(2) as [string, string, string];
/** User + system CPU of the whole process (every thread) since it listened, in ms: startup excluded. */
let cpuAtListen = 0;
/**
 * CPU ms since listening of the main thread and of every other thread (the spool's sync thread,
 * V8's helpers), from /proc (Linux only): the receiver's main thread limits the deliveries a second.
 */
let threadsAtListen = new Map<string, number>();
const threadCpuMs = (reset = false): { main: number; others: number } | undefined => {
  const now = readThreadCpuMs('self');
  if (!now) return undefined; // not Linux
  const since = (tid: string): number => now.get(tid)! - (threadsAtListen.get(tid) ?? 0);
  const main = since(String(process.pid));
  let others = 0;
  for (const tid of now.keys()) if (tid !== String(process.pid)) others += since(tid);
  if (reset) threadsAtListen = now;
  return { main, others };
};
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return Math.round((u.user + u.system) / 1000 - cpuAtListen);
};

if (mode === 'baseline') {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const given = Buffer.from(String(req.headers['x-service-signature'] ?? '').slice(7), 'hex');
      const expected = createHmac('sha256', secret).update(body).digest();
      const ok = given.length === expected.length && timingSafeEqual(given, expected);
      res.writeHead(ok ? 200 : 401).end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    cpuAtListen = cpuMs();
    threadCpuMs(true);
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/crm` })}\n`);
  });
  process.on('SIGTERM', () => {
    process.stdout.write(`${JSON.stringify({ stats: { cpuMs: cpuMs(), threads: threadCpuMs() } })}\n`);
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
} else {
  // Threads that appear while the service starts are the spool's sync threads (libuv's pool is
  // running by then): the bench tells their CPU from that of V8's helper threads (GC, compiler).
  const threadsBefore = new Set(readThreadCpuMs('self')?.keys());
  const service = await startWebhookService({
    spoolDir,
    ...(process.env.BENCH_SYNCS ? { syncsInFlight: Number(process.env.BENCH_SYNCS) } : {}),
    ...(process.env.BENCH_SYNC_THREADS ? { syncThreads: Number(process.env.BENCH_SYNC_THREADS) } : {}),
    host: '127.0.0.1',
    port: 0,
    secrets: createSecretResolver({ secret: new Secret(secret) }),
  });
  cpuAtListen = cpuMs();
  threadCpuMs(true);
  const spoolThreads = [...(readThreadCpuMs('self')?.keys() ?? [])].filter((tid) => !threadsBefore.has(tid));
  process.stdout.write(`${JSON.stringify({ url: service.url, spoolThreads })}\n`);
  process.on('SIGTERM', () => {
    const s = service.spool.stats();
    process.stdout.write(
      `${JSON.stringify({ stats: { committed: s.committedSeq, fsyncBatches: s.batches, avgBatch: Math.round(s.committedSeq / Math.max(1, s.batches)), avgSyncMs: Number((s.syncMsTotal / Math.max(1, s.batches)).toFixed(2)), maxSyncMs: s.syncMsMax, syncs: s.syncs, syncWakeups: s.syncWakeups, silentSyncs: s.silentSyncs, received: service.metrics.snapshot().received, cpuMs: cpuMs(), threads: threadCpuMs() } })}\n`,
    );
    service.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err); // a child process: its parent shows this stderr
        process.exit(1);
      },
    );
  });
}
