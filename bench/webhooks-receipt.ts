// Main-thread CPU per delivery of the receiver's own work, without node:http: handleWebhookRequest
// (every check at receipt) and a real spool (group commit, sync threads, fdatasync), 32 deliveries
// in flight, as bench/webhooks.ts sends them. With --versus DIR the same runs alternate with
// another checkout's modules (e.g. a worktree of main) in the same process: an A/B whose ratio is
// steadier than the HTTP bench's on a busy machine. Each run also counts the JS heap bytes
// allocated per delivery (v8.GCProfiler: the used heap's growth between collections), the garbage
// the GC's helper threads collect. Writes bench/results/<out>.json.
//   node --import tsx bench/webhooks-receipt.ts [--deliveries 20000] [--rounds 6] [--versus DIR]
//   [--out webhooks-receipt] [--label TEXT]
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { GCProfiler } from 'node:v8';
import type * as SecretModule from '../src/secret.js';
import { Secret } from '../src/secret.js';
import type * as HandlerModule from '../src/webhooks/handle-webhook-request.js';
import type * as ResolverModule from '../src/webhooks/secret-resolver.js';
import type * as SpoolModule from '../src/webhooks/spool.js';
import { signBody } from '../src/webhooks/verify-signature.js';
import type * as MetricsModule from '../src/webhooks/webhook-metrics.js';
import { median } from './runner/median.js';

const { values } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '6' },
    versus: { type: 'string' },
    out: { type: 'string', default: 'webhooks-receipt' },
    label: { type: 'string' },
  },
});
if (!/^webhooks[\w-]*$/.test(values.out)) throw new Error('--out must be a name starting with "webhooks", e.g. webhooks-receipt');
const N = Number(values.deliveries);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 32;
const SECRET = 'bench-secret-0123456789abcdef';
const root = join(import.meta.dirname, '.tmp');
mkdirSync(root, { recursive: true });
const work = mkdtempSync(join(root, 'webhooks-receipt-'));
const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));

/** CPU ms of this process's main thread (Linux): the thread that limits deliveries a second. */
const mainThreadMs = (): number => {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

/**
 * Heap bytes allocated while `fn` runs: the used heap's growth before each collection and after
 * the last one (what a collection frees was allocated since the one before it, or before `fn`).
 */
async function heapAllocated<T>(fn: () => Promise<T>): Promise<{ value: T; bytes: number }> {
  const profiler = new GCProfiler();
  profiler.start();
  let bytes = 0;
  let last = process.memoryUsage().heapUsed;
  const value = await fn();
  const end = process.memoryUsage().heapUsed;
  for (const gc of profiler.stop()?.statistics ?? []) {
    bytes += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - last);
    last = gc.afterGC.heapStatistics.usedHeapSize;
  }
  bytes += Math.max(0, end - last);
  return { value, bytes };
}

type Delivery = { headers: Record<string, string>; body: Buffer };

interface Receiver {
  name: string;
  run(dir: string, deliveries: { headers: Record<string, string>; body: Buffer }[]): Promise<{ mainUs: number; heapBytes: number; accepted: number }>;
}

async function receiverOf(name: string, checkout: string): Promise<Receiver> {
  const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(checkout, path)).href)) as T;
  const { handleWebhookRequest, receiveWebhook } = await load<Partial<typeof HandlerModule> & Pick<typeof HandlerModule, 'handleWebhookRequest'>>('src/webhooks/handle-webhook-request.ts');
  // The server's own path where the checkout has it (callbacks, no promise per delivery); before
  // it, the server went through handleWebhookRequest.
  const handle = receiveWebhook
    ? (d: Delivery, deps: HandlerModule.WebhookHandlerDeps): Promise<HandlerModule.WebhookResponse> =>
        new Promise((resolve, reject) =>
          receiveWebhook(
            'POST',
            d.headers,
            (_limit, _expected, done) => done(null, d.body),
            deps,
            (err, r) => (err === null ? resolve(r!) : reject(err as Error)),
          ),
        )
    : (d: Delivery, deps: HandlerModule.WebhookHandlerDeps): Promise<HandlerModule.WebhookResponse> => handleWebhookRequest({ method: 'POST', headers: d.headers, body: d.body }, deps);
  const { openSpool } = await load<typeof SpoolModule>('src/webhooks/spool.ts');
  const { createSecretResolver } = await load<typeof ResolverModule>('src/webhooks/secret-resolver.ts');
  const { createWebhookMetrics } = await load<typeof MetricsModule>('src/webhooks/webhook-metrics.ts');
  const { Secret: CheckoutSecret } = await load<typeof SecretModule>('src/secret.ts');
  return {
    name,
    async run(dir, deliveries) {
      const spool = await openSpool({ dir });
      const deps = { secrets: createSecretResolver({ secret: new CheckoutSecret(SECRET) }), spool, metrics: createWebhookMetrics() };
      let accepted = 0;
      let next = 0;
      const t0 = mainThreadMs();
      const worker = async (): Promise<void> => {
        while (next < deliveries.length) {
          const d = deliveries[next++]!;
          const r = await handle(d, deps);
          if (r.status === 202) accepted++;
        }
      };
      const { bytes } = await heapAllocated(() => Promise.all(Array.from({ length: IN_FLIGHT }, worker)));
      const mainUs = ((mainThreadMs() - t0) * 1000) / deliveries.length;
      await spool.close();
      return { mainUs: Math.round(mainUs * 10) / 10, heapBytes: Math.round(bytes / deliveries.length), accepted };
    },
  };
}

function deliveriesFor(round: number): { headers: Record<string, string>; body: Buffer }[] {
  return Array.from({ length: N }, (_, i) => {
    const body = Buffer.from(
      JSON.stringify({
        event: 'contact.updated',
        timestamp: new Date().toISOString(),
        webhook_id: 1,
        data: { contact: { id: i, email: `c${i}@example.com`, first_name: 'Ada', last_name: 'Lovelace', status: 'subscribed', created_at: '2026-01-01 00:00:00' } },
        signature: 'sha256=inner',
      }),
    );
    const headers = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'x-service-event': 'contact.updated',
      'x-service-signature': signBody(body, new Secret(SECRET)),
      'x-service-webhook-id': '1',
      'x-service-delivery': `receipt-${round}-${i}-${randomUUID().slice(0, 8)}`,
    };
    return { headers, body };
  });
}

// Checkouts before a8e941a could let the process end while a spool's sync threads were closing
// (close() never resolved): a referenced timer keeps this process alive until the end.
const keepAlive = setInterval(() => undefined, 60_000);
try {
  const receivers = [await receiverOf('this', resolve(import.meta.dirname, '..'))];
  if (values.versus) receivers.push(await receiverOf('versus', resolve(values.versus)));
  const runs: Record<string, { mainUs: number; heapBytes: number; accepted: number }[]> = Object.fromEntries(receivers.map((r) => [r.name, []]));
  // A warm-up round for each, not recorded, then alternated rounds with fresh deliveries.
  for (const r of receivers) await r.run(join(work, `warm-${r.name}`), deliveriesFor(-1).slice(0, 5_000));
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of round % 2 === 0 ? receivers : [...receivers].reverse()) {
      const run = await r.run(join(work, `${round}-${r.name}`), deliveriesFor(round));
      if (run.accepted !== N) throw new Error(`${r.name} accepted ${run.accepted} of ${N} deliveries`);
      runs[r.name]!.push(run);
      process.stdout.write(`round ${round + 1} ${r.name.padEnd(7)} main thread ${run.mainUs} us, heap ${run.heapBytes} bytes a delivery\n`);
    }
  }
  const summary = Object.fromEntries(receivers.map((r) => [r.name, { mainUs: median(runs[r.name]!.map((x) => x.mainUs)), heapBytes: median(runs[r.name]!.map((x) => x.heapBytes)) }]));
  const ratio = values.versus ? Number(median(runs.this!.map((x, i) => x.mainUs / runs.versus![i]!.mainUs)).toFixed(3)) : undefined;
  const result = {
    benchmark: 'webhooks-receipt',
    at: new Date().toISOString(),
    node: process.version,
    ...(values.label ? { label: values.label } : {}),
    ...(values.versus ? { versus: values.versus } : {}),
    loadAverage: { start: loadAtStart, end: loadavg().map((l) => Number(l.toFixed(2))) },
    deliveriesPerRound: N,
    inFlight: IN_FLIGHT,
    rounds: ROUNDS,
    summary,
    ...(ratio !== undefined ? { ratioThisToVersus: ratio } : {}),
    runs,
  };
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', `${values.out}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\n${JSON.stringify(summary)}${ratio !== undefined ? `  this/versus main-thread CPU: ${ratio} (median of per-round ratios)` : ''}\n`);
} finally {
  clearInterval(keepAlive);
  rmSync(work, { recursive: true, force: true });
}
