// Webhook ingest benchmark: sustained accepted deliveries/s through the real receiver (fsync per
// group commit) against a minimal node:http server that only verifies the HMAC, with the same
// closed-loop load generator in the same run. Figures go to bench/results/webhooks.json. The ratio
// is the median of the rounds' ratios, printed with a distribution-free interval of that median
// (from 5 rounds on; 8 rounds give 93%, 16 give 92% over a narrower range).
//   node --import tsx bench/webhooks.ts [--seconds 4] [--connections 32] [--rounds 3] [--out webhooks]
//   [--profile DIR]: each server writes V8 CPU profiles (--cpu-prof) into DIR/baseline and DIR/durable.
//   [--warmup 0.5]: seconds of load before the measured window, for each server alike. The receiver
//   runs for days: with 0.5 s its hot functions were still being optimized seconds into the window
//   (bench/results/notes.md, "the receiver's throughput ratio"); 2 s or more measures the steady state.
//   [--tsx]: run both servers from source through tsx instead of compiled (the default, as deployed).
//   [--idle 2000] [--deliveries 1000]: the flood scenario after the rounds (0 skips it): that many
//   idle sockets from 127.0.0.2 held open against the durable receiver while the deliveries come
//   from 127.0.0.1; acknowledged count and p99, against the same deliveries with no flood.
//   [--versus DIR]: each round also runs the durable receiver of another checkout (DIR, e.g. a
//   worktree of main, compiled the same way), recorded as `versus`: an A/B in the same run.
//   [--label TEXT]: what the run compares, kept in the result with the machine's load average at
//   the start and the end (the machine is shared: a figure without its load says little).
//   BENCH_SYNCS=N: the durable receiver with at most N batches in flight (default: the spool's).
//   BENCH_SYNC_THREADS=N: the spool's sync threads (default: DEFAULT_SYNC_THREADS).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { signBody } from '../src/webhooks/verify-signature.js';
import { readThreadCpuMs } from './runner/thread-cpu.js';
import { median, medianInterval, type MedianInterval } from './runner/median.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'webhooks' },
    profile: { type: 'string' },
    tsx: { type: 'boolean', default: false },
    idle: { type: 'string', default: '2000' },
    versus: { type: 'string' },
    deliveries: { type: 'string', default: '1000' },
    label: { type: 'string' },
    warmup: { type: 'string', default: '0.5' },
  },
});
if (!/^webhooks[\w-]*$/.test(values.out)) throw new Error('--out must be a name starting with "webhooks", e.g. webhooks-64');
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
const WARMUP_MS = 1000 * Number(values.warmup);
const SECRET = 'bench-secret-0123456789abcdef';
const root = join(import.meta.dirname, '.tmp');
mkdirSync(root, { recursive: true });
const work = mkdtempSync(join(root, 'webhooks-'));
const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));

interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
  /** Server CPU (all threads) per answered request, warm-up included, in microseconds. */
  serverCpuUs?: number;
  /** The same, of the server's main thread alone (Linux). */
  mainThreadCpuUs?: number;
  /** Server CPU (all threads) per request answered in the measured window, warm-up excluded (Linux). */
  windowCpuUs?: number;
  /** The same, of the server's main thread alone. */
  windowMainThreadCpuUs?: number;
  /** The same, of the threads the spool started (its sync threads; a server that reports them). */
  windowSpoolCpuUs?: number;
}

/**
 * CPU ms of a process's main thread, of its other threads, and of those of them in `spool` (the
 * threads the durable server's spool started), from /proc (Linux; undefined elsewhere).
 */
function threadCpuMs(pid: number, spool: readonly string[] = []): { main: number; others: number; spool: number } | undefined {
  const cpu = readThreadCpuMs(pid);
  if (!cpu) return undefined;
  const main = cpu.get(String(pid)) ?? 0;
  let others = 0;
  for (const [tid, ms] of cpu) if (tid !== String(pid)) others += ms;
  let inSpool = 0;
  for (const tid of spool) inSpool += cpu.get(tid) ?? 0;
  return { main, others, spool: inSpool };
}

/** Issue 17's target for the durable receiver's rate over the HMAC server's. */
const RATIO_TARGET = 0.5;

/** How the interval of the median ratio reads against the target. */
function intervalText(i: MedianInterval | null): string {
  if (!i) return 'too few rounds for an interval of the median: 5 or more give 90%';
  const verdict = i.low >= RATIO_TARGET ? 'above the target' : i.high < RATIO_TARGET ? 'below the target' : 'the target inside it';
  return `${Math.round(i.coverage * 100)}% interval of the median ${i.low}-${i.high}, ${verdict}`;
}

let serial = 0;
function delivery(): { headers: Record<string, string>; body: string } {
  const id = `bench-${process.pid}-${serial++}-${randomUUID().slice(0, 8)}`;
  const body = JSON.stringify({
    event: 'contact.updated',
    timestamp: new Date().toISOString(),
    webhook_id: 1,
    data: { contact: { id: serial, email: `c${serial}@example.com`, first_name: 'Ada', last_name: 'Lovelace', status: 'subscribed', created_at: '2026-01-01 00:00:00' } },
    signature: 'sha256=inner',
  });
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-service-event': 'contact.updated', 'x-service-signature': signBody(body, SECRET), 'x-service-webhook-id': '1', 'x-service-delivery': id },
  };
}

/**
 * Both servers run compiled (tsc, as `crmsync listen` runs from dist/), not through tsx, whose
 * per-function helpers would tax the receiver's many small functions more than the baseline's
 * one handler. `--tsx` runs them from source instead.
 */
async function compileServers(checkout = join(import.meta.dirname, '..')): Promise<string | undefined> {
  if (values.tsx) return undefined;
  const outDir = join(import.meta.dirname, '.tmp', checkout === join(import.meta.dirname, '..') ? 'webhooks-dist' : 'webhooks-dist-versus');
  const tsc = spawn(process.execPath, [join(import.meta.dirname, '..', 'node_modules/typescript/bin/tsc'), '-p', join(checkout, 'tsconfig.json'), '--outDir', outDir], { stdio: 'inherit' });
  const code = await new Promise((r) => tsc.once('exit', r));
  if (code !== 0) throw new Error(`tsc exited with ${String(code)}`);
  return join(outDir, 'bench', 'webhooks-server.js');
}
const serverEntry = await compileServers();
if (values.versus && values.tsx) throw new Error('--versus runs compiled servers: drop --tsx');
const versusEntry = values.versus ? await compileServers(values.versus) : undefined;

type Mode = 'baseline' | 'durable' | 'versus';

async function startServer(mode: Mode, spoolDir: string): Promise<{ child: ChildProcess; url: string; spoolThreads: string[]; stop(): Promise<Record<string, unknown>> }> {
  const profile = values.profile ? ['--cpu-prof', '--cpu-prof-dir', join(values.profile, mode)] : [];
  const entry = mode === 'versus' ? [versusEntry!] : serverEntry ? [serverEntry] : ['--import', 'tsx', join(import.meta.dirname, 'webhooks-server.ts')];
  const child = spawn(process.execPath, [...profile, ...entry, mode === 'baseline' ? 'baseline' : 'durable', SECRET, spoolDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  lines.on('line', (l) => {
    queue.push(l);
    wake?.();
  });
  const nextLine = async (): Promise<string> => {
    while (queue.length === 0) await new Promise<void>((r) => (wake = r));
    return queue.shift()!;
  };
  const { url, spoolThreads = [] } = JSON.parse(await nextLine()) as { url: string; spoolThreads?: string[] };
  return {
    child,
    url,
    spoolThreads,
    async stop() {
      child.kill('SIGTERM');
      const stats = (JSON.parse(await nextLine()) as { stats: Record<string, unknown> }).stats;
      await new Promise((r) => child.once('exit', r));
      return stats;
    },
  };
}

/** Closed loop: each connection sends its next delivery as soon as the previous one is answered. */
async function load(url: string, seconds: number, pid: number, spoolThreads: readonly string[]): Promise<Run & { answered: number }> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let answered = 0;
  const warmupEnd = performance.now() + WARMUP_MS;
  const end = warmupEnd + seconds * 1000;
  // The server's CPU over the measured window alone: sampled as it starts and ends.
  let inWindow = 0;
  let cpuAtStart: ReturnType<typeof threadCpuMs>;
  let cpuAtEnd: ReturnType<typeof threadCpuMs>;
  const started = setTimeout(() => (cpuAtStart = threadCpuMs(pid, spoolThreads)), WARMUP_MS);
  const ended = setTimeout(() => (cpuAtEnd = threadCpuMs(pid, spoolThreads)), WARMUP_MS + seconds * 1000);
  const worker = async () => {
    while (performance.now() < end) {
      const d = delivery();
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: u.pathname, method: 'POST', headers: d.headers, body: d.body });
        await res.body.dump();
        if (res.statusCode >= 300) errors++;
      } catch {
        errors++;
      }
      const t1 = performance.now();
      answered++;
      if (t1 > warmupEnd && t1 <= end) inWindow++;
      if (t0 >= warmupEnd && t1 <= end) latencies.push(t1 - t0);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  // The last answers can come before the timer that ends the window (set a moment after it was computed).
  clearTimeout(started);
  clearTimeout(ended);
  cpuAtEnd ??= threadCpuMs(pid, spoolThreads);
  await pool.close();
  const window =
    cpuAtStart && cpuAtEnd
      ? {
          windowCpuUs: Math.round((1000 * (cpuAtEnd.main + cpuAtEnd.others - cpuAtStart.main - cpuAtStart.others)) / Math.max(1, inWindow)),
          windowMainThreadCpuUs: Math.round((1000 * (cpuAtEnd.main - cpuAtStart.main)) / Math.max(1, inWindow)),
          ...(spoolThreads.length > 0 ? { windowSpoolCpuUs: Math.round((1000 * (cpuAtEnd.spool - cpuAtStart.spool)) / Math.max(1, inWindow)) } : {}),
        }
      : {};
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(2));
  return { rps: Math.round(latencies.length / seconds), p50: q(0.5), p99: q(0.99), errors, requests: latencies.length, answered, ...window };
}

interface FloodRun {
  idleSockets: number;
  /**
   * Idle sockets the client still saw open when the deliveries began: those the receiver holds
   * (its per-address limit) plus those still queued in the kernel, not yet accepted.
   */
  idleStillOpen: number;
  deliveries: number;
  acknowledged: number;
  errors: number;
  p50: number;
  p99: number;
}

/**
 * `idle` sockets from 127.0.0.2 that never send a byte, then `n` deliveries from 127.0.0.1 over 8
 * connections; with idle = 0 the same deliveries are the baseline.
 */
async function flood(url: string, idle: number, n: number): Promise<FloodRun> {
  const u = new URL(url);
  const sockets: Socket[] = [];
  let open = 0;
  await Promise.all(
    Array.from(
      { length: idle },
      () =>
        new Promise<void>((resolve) => {
          const sock = connect({ host: u.hostname, port: Number(u.port), localAddress: '127.0.0.2' });
          sockets.push(sock);
          sock.once('connect', () => {
            open++;
            resolve();
          });
          sock.once('close', () => {
            open--;
            resolve();
          });
          sock.on('error', () => resolve());
        }),
    ),
  );
  // Let the receiver accept (and close what is over its limits) before measuring.
  await new Promise((r) => setTimeout(r, 300));
  const idleStillOpen = Math.max(0, open);
  const pool = new Pool(u.origin, { connections: 8, pipelining: 1 });
  const latencies: number[] = [];
  let acknowledged = 0;
  let errors = 0;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const d = delivery();
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: u.pathname, method: 'POST', headers: d.headers, body: d.body });
        await res.body.dump();
        if (res.statusCode === 200 || res.statusCode === 202) acknowledged++;
        else errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await pool.close();
  for (const sock of sockets) sock.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(2));
  return { idleSockets: idle, idleStillOpen, deliveries: n, acknowledged, errors, p50: q(0.5), p99: q(0.99) };
}

try {
  const runs: Record<Mode, Run[]> = { baseline: [], durable: [], versus: [] };
  let spoolStats: Record<string, unknown> = {};
  const modes: Mode[] = versusEntry ? ['baseline', 'durable', 'versus'] : ['baseline', 'durable'];
  // Alternate the servers so that drift in machine load hits them alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of modes) {
      const server = await startServer(mode, join(work, `spool-${round}-${mode}`));
      const { answered, ...run } = await load(server.url, SECONDS, server.child.pid!, server.spoolThreads);
      const stats = await server.stop();
      if (mode === 'durable') spoolStats = stats;
      run.serverCpuUs = Math.round((1000 * Number(stats.cpuMs)) / Math.max(1, answered));
      const threads = stats.threads as { main: number; others: number } | undefined;
      if (threads) run.mainThreadCpuUs = Math.round((1000 * threads.main) / Math.max(1, answered));
      runs[mode].push(run);
      process.stdout.write(
        `round ${round + 1} ${mode.padEnd(11)} ${String(run.rps).padStart(6)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  errors ${run.errors}  server CPU ${run.serverCpuUs} us/req (main thread ${run.mainThreadCpuUs ?? '?'}); measured window ${run.windowCpuUs ?? '?'} (main thread ${run.windowMainThreadCpuUs ?? '?'}${run.windowSpoolCpuUs === undefined ? '' : `, spool threads ${run.windowSpoolCpuUs}`})\n`,
      );
    }
  }
  // The flood scenario: the file descriptors of 2,000 sockets must fit this process's limit.
  const IDLE = Number(values.idle);
  const DELIVERIES = Number(values.deliveries);
  let floodResult: { baseline: FloodRun; flood: FloodRun; p99Ratio: number } | undefined;
  if (IDLE > 0) {
    const limit = Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim());
    if (Number.isFinite(limit) && limit < IDLE + 256) throw new Error(`ulimit -n is ${limit}: raise it to at least ${IDLE + 256} (ulimit -n ${IDLE + 1024}) to hold ${IDLE} idle sockets`);
    const server = await startServer('durable', join(work, 'spool-flood'));
    const baseline = await flood(server.url, 0, DELIVERIES);
    const underFlood = await flood(server.url, IDLE, DELIVERIES);
    await server.stop();
    floodResult = { baseline, flood: underFlood, p99Ratio: Number((underFlood.p99 / Math.max(0.01, baseline.p99)).toFixed(2)) };
    process.stdout.write(
      `flood: ${IDLE} idle sockets from 127.0.0.2 (${underFlood.idleStillOpen} still open), ${DELIVERIES} deliveries from 127.0.0.1: ${underFlood.acknowledged} acknowledged, ${underFlood.errors} errors, p50 ${underFlood.p50} ms, p99 ${underFlood.p99} ms (no flood: p99 ${baseline.p99} ms, ${baseline.acknowledged} acknowledged)\n`,
    );
  }
  const summary = (rs: Run[]) => ({
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    serverCpuUs: median(rs.map((r) => r.serverCpuUs ?? NaN)),
    mainThreadCpuUs: median(rs.map((r) => r.mainThreadCpuUs ?? NaN)),
    windowCpuUs: median(rs.map((r) => r.windowCpuUs ?? NaN)),
    windowMainThreadCpuUs: median(rs.map((r) => r.windowMainThreadCpuUs ?? NaN)),
    windowSpoolCpuUs: median(rs.map((r) => r.windowSpoolCpuUs ?? NaN)),
  });
  const baseline = summary(runs.baseline);
  const durable = summary(runs.durable);
  // Each round's two runs are adjacent in time: their ratio is the least noisy figure.
  const ratios = runs.durable.map((d, i) => d.rps / runs.baseline[i]!.rps);
  const ratio = Number(median(ratios).toFixed(3));
  // The rounds' ratios vary by a fifth on this machine: how sure the median is of the target.
  const interval = medianInterval(ratios);
  const ratioInterval = interval ? { low: Number(interval.low.toFixed(3)), high: Number(interval.high.toFixed(3)), coverage: Number(interval.coverage.toFixed(3)) } : null;
  const versus = versusEntry ? { checkout: values.versus, ...summary(runs.versus), ratio: Number(median(runs.versus.map((d, i) => d.rps / runs.baseline[i]!.rps)).toFixed(3)) } : undefined;
  const result = {
    benchmark: 'webhooks',
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    ...(values.label ? { label: values.label } : {}),
    loadAverage: { start: loadAtStart, end: loadavg().map((l) => Number(l.toFixed(2))) },
    connections: CONNECTIONS,
    servers: serverEntry ? 'compiled (tsc), as deployed' : 'from source through tsx',
    secondsPerRun: SECONDS,
    warmupSeconds: WARMUP_MS / 1000,
    rounds: ROUNDS,
    baseline,
    durable,
    ratio,
    ratioInterval,
    ...(versus ? { versus } : {}),
    lastDurableSpool: spoolStats,
    flood: floodResult,
    targets: { rps: 2000, p99Ms: 50, ratio: RATIO_TARGET, floodAcknowledged: DELIVERIES, floodP99Ms: 100 },
    meets: {
      rps: durable.rps >= 2000,
      p99: durable.p99 < 50,
      ratio: ratio >= RATIO_TARGET,
      ...(floodResult ? { floodAcknowledged: floodResult.flood.acknowledged === DELIVERIES, floodP99: floodResult.flood.p99 < 100 } : {}),
    },
    runs,
  };
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', `${values.out}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    `\ndurable receiver: ${durable.rps} accepted/s, p50 ${durable.p50} ms, p99 ${durable.p99} ms, server CPU ${durable.serverCpuUs} us/req, in the measured window ${durable.windowCpuUs} (main thread ${durable.windowMainThreadCpuUs}, spool threads ${durable.windowSpoolCpuUs})\n` +
      `HMAC-only node:http: ${baseline.rps} req/s, p50 ${baseline.p50} ms, p99 ${baseline.p99} ms, server CPU ${baseline.serverCpuUs} us/req, in the measured window ${baseline.windowCpuUs} (main thread ${baseline.windowMainThreadCpuUs})\n` +
      `ratio ${ratio} (median of per-round ratios, target >= ${RATIO_TARGET}; ${intervalText(ratioInterval)}); fsync batches in the last durable run: ${JSON.stringify(spoolStats)}\n` +
      (versus ? `versus ${values.versus}: ${versus.rps} accepted/s, server CPU ${versus.serverCpuUs} us/req (main thread ${versus.mainThreadCpuUs}), ratio ${versus.ratio}\n` : ''),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
