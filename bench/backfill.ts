/**
 * Backfill benchmark: contacts from the simulator (in a child process) into a fresh warehouse
 * through the real workflow and activities, served by a compiled `crmsync worker` in its own
 * process, and a Temporal dev server, against a raw fetch floor:
 * the same pages fetched by a bare undici loop at the same concurrency, bodies discarded.
 *
 *   node --import tsx bench/backfill.ts [contacts...]      (default: 100000 1000000)
 *   BENCH_PER_PAGE=500 BENCH_PARALLELISM=4 ...
 *   BENCH_WORKER_NODE_OPTIONS=--max-old-space-size=256 ...   (Node flags for the worker only)
 *   BENCH_PROFILE=low-memory ...   (the worker with the low-memory settings of docs/sync.md)
 *   BENCH_MEMORY_PROBE=1 ...   (the worker logs its memory after each warehouse job: V8 heap against
 *                               DuckDB; the largest of each, and the figures at the largest RSS, are printed;
 *                               BENCH_MEMORY_PROBE=all prints every job's figures too)
 *   DUCKDB_JE_MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0 ...   (DuckDB's allocator settings for the worker)
 *   BENCH_LABEL=before ...   (figures recorded under `<key>_<label>`, beside the unlabelled ones)
 *   BENCH_THREADS=1 ...   (prints the worker's CPU thread by thread; the sums by thread name are
 *                          recorded as workerThreadCpuSeconds in every run on Linux)
 *
 * Prints the figures and writes bench/results/backfill.json (merged per size).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { quietTemporalRuntime } from '../src/sync/quiet-temporal-runtime.js';
import { runSync } from '../src/sync/run-sync.js';
import { startDevServer } from '../src/temporal/dev-server.js';
import { locateTemporalCliFromConfig } from '../src/temporal/locate-cli.js';
import { taskQueues } from '../src/temporal/task-queues.js';
import { latencyAt, REAL_DEPLOYMENT_LATENCY } from '../src/simulator/index.js';
import { launchedProcess, processCpuSeconds, processMemoryMb } from './runner/process-memory.js';
import { readThreadCpuMs, readThreadNames, threadCpuByName } from './runner/thread-cpu.js';
import { sampleMachineCpu, type MachineCpu } from './runner/machine-cpu.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const SIZES = sizes.length > 0 ? sizes : [100_000, 1_000_000];
/**
 * Server time per request. `none`: the simulator answers at once, so the floor is what one core
 * of this machine can serve and the run is CPU-bound on 2 cores. `real`: the latency the real
 * deployment showed for GET /subscribers (fixtures README: 28-36 ms at per_page=15, 47-71 ms at
 * 100, 202-311 ms at 1000, local, 4 PHP workers), by each request's page size, interpolated
 * linearly (REAL_DEPLOYMENT_LATENCY): 116-178 ms for this bench's pages of 500, which is where
 * a real backfill spends its time, and the small page's time for a one-row probe or a single
 * contact. Before 2026-12-05 every request took the 500-row page's time, probes included.
 * BENCH_LATENCY=none|real|both (default both).
 */
const LATENCY = (process.env.BENCH_LATENCY ?? 'both') as 'none' | 'real' | 'both';
const PER_PAGE = Number(process.env.BENCH_PER_PAGE ?? 500);
const PARALLELISM = Number(process.env.BENCH_PARALLELISM ?? 4);
/**
 * Range activities at once (the workflow's `parallelism`). Requests stay capped at PARALLELISM by
 * the client (CRM_MAX_CONCURRENCY), the floor's concurrency; extra ranges keep those requests
 * going while a range waits for its last pages to be durable.
 */
const RANGES = Number(process.env.BENCH_RANGES ?? PARALLELISM);
const RESULTS = 'bench/results/backfill.json';
/**
 * Worker settings profiles. `low-memory` is the one docs/sync.md and the README give for small
 * machines: one DuckDB thread, a 128MB DuckDB limit, a 192 MB V8 old space. Figures are recorded
 * under their own keys, beside the defaults'.
 */
const PROFILES: Record<string, { env: Record<string, string>; nodeOptions: string }> = {
  default: { env: {}, nodeOptions: '' },
  'low-memory': { env: { CRMSYNC_SYNC_THREADS: '1', CRMSYNC_SYNC_MEMORY_LIMIT: '128MB' }, nodeOptions: '--max-old-space-size=192' },
};
const PROFILE_NAME = process.env.BENCH_PROFILE ?? 'default';
/** Suffix of the result keys, so a before/after pair stays side by side (e.g. `before-hmem`). */
const LABEL = process.env.BENCH_LABEL ?? '';
const PROFILE = PROFILES[PROFILE_NAME] ?? unknownProfile();
function unknownProfile(): never {
  throw new Error(`BENCH_PROFILE must be one of ${Object.keys(PROFILES).join(', ')}, got "${PROFILE_NAME}"`);
}
/** NODE_OPTIONS for the worker process only, e.g. `--max-old-space-size=256` (recorded with the figures). */
const WORKER_NODE_OPTIONS = process.env.BENCH_WORKER_NODE_OPTIONS ?? PROFILE.nodeOptions;
/** Worker settings under test, passed through from this script's environment (and recorded with the figures). */
const PASSED_ENV = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => k.startsWith('CRMSYNC_SYNC_') || k.startsWith('CRMSYNC_WORKER_') || k.startsWith('MALLOC_') || k === 'DUCKDB_JE_MALLOC_CONF' || k === 'NODE_OPTIONS' || k === 'LD_PRELOAD',
  ),
) as Record<string, string>;
const DLT_PYTHON = 'bench/.tmp/venv/bin/python';
/** dlt is slow: above this size it is skipped unless BENCH_DLT_MAX says otherwise. */
const DLT_MAX = Number(process.env.BENCH_DLT_MAX ?? 100_000);

interface Sim {
  baseUrl: string;
  credentials: { username: string; password: string };
  child: ChildProcess;
  requests(): number;
  /** When the request count last grew (performance.now(), to the simulator's 100 ms reports). */
  lastRequestAt(): number;
  stop(): Promise<void>;
}

/** The real scenario's range for one of this bench's pages (the simulator draws by each request's page size). */
function realLatencyMs(perPage: number): [number, number] {
  const { min, max } = latencyAt(REAL_DEPLOYMENT_LATENCY, perPage);
  return [Math.round(min), Math.round(max)];
}

async function startSim(contacts: number, real: boolean): Promise<Sim> {
  const child = spawn(process.execPath, ['--max-old-space-size=6144', '--import', 'tsx', 'bench/backfill-sim-server.ts', String(contacts), ...(real ? ['real'] : [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let requests = 0;
  let lastRequestAt = 0;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    try {
      const parsed = JSON.parse(line) as { stats?: { requests: number } };
      if (parsed.stats && parsed.stats.requests > requests) lastRequestAt = performance.now();
      if (parsed.stats) requests = parsed.stats.requests;
    } catch {
      process.stderr.write(`[sim] ${line}\n`);
    }
  });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  const info = JSON.parse(first) as { baseUrl: string; credentials: { username: string; password: string } };
  return {
    ...info,
    child,
    requests: () => requests,
    lastRequestAt: () => lastRequestAt,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

/** The floor: the same pages by a bare undici loop, `PARALLELISM` at once, bodies discarded. */
async function rawFetchFloor(sim: Sim, pages: number): Promise<number> {
  const url = new URL(sim.baseUrl);
  const pool = new Pool(url.origin, { connections: PARALLELISM });
  const auth = `Basic ${Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64')}`;
  let next = 1;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: PARALLELISM }, async () => {
      for (let page = next++; page <= pages; page = next++) {
        const res = await pool.request({
          path: `${url.pathname}/subscribers?per_page=${PER_PAGE}&page=${page}&sort_by=id&sort_type=ASC&order_by=id&order_type=ASC`,
          method: 'GET',
          headers: { authorization: auth, accept: 'application/json' },
        });
        if (res.statusCode !== 200) throw new Error(`floor: page ${page} answered ${res.statusCode}`);
        await res.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return seconds;
}

/** With BENCH_TIMELINE=1: every activity of the run (from the workflow histories), seconds from the start. */
async function printTimeline(client: Client, startedPerf: number): Promise<void> {
  const t0 = Date.now() - (performance.now() - startedPerf);
  const ms = (t: unknown) => {
    const ts = t as { seconds?: { toNumber(): number } | number; nanos?: number } | null | undefined;
    const secs = typeof ts?.seconds === 'number' ? ts.seconds : (ts?.seconds?.toNumber() ?? 0);
    return secs * 1000 + (ts?.nanos ?? 0) / 1e6 - t0;
  };
  for await (const wf of client.workflow.list()) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const scheduled = new Map<string, { type: string; at: number; started?: number }>();
    for (const e of history.events ?? []) {
      const id = String(e.eventId);
      if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at: ms(e.eventTime) });
      if (e.workflowExecutionStartedEventAttributes || e.workflowTaskStartedEventAttributes || e.workflowTaskCompletedEventAttributes || e.startChildWorkflowExecutionInitiatedEventAttributes) {
        const kind = e.workflowExecutionStartedEventAttributes
          ? 'workflow started'
          : e.workflowTaskStartedEventAttributes
            ? 'workflow task started'
            : e.workflowTaskCompletedEventAttributes
              ? 'workflow task done'
              : 'child initiated';
        if (ms(e.eventTime) < 8000) process.stderr.write(`[timeline] ${wf.workflowId.slice(-24).padEnd(24)} ${kind.padEnd(22)} at ${(ms(e.eventTime) / 1000).toFixed(2)}\n`);
      }
      const startedAttr = e.activityTaskStartedEventAttributes;
      if (startedAttr) {
        const s = scheduled.get(String(startedAttr.scheduledEventId));
        if (s) s.started = ms(e.eventTime);
      }
      const done = e.activityTaskCompletedEventAttributes;
      if (done) {
        const s = scheduled.get(String(done.scheduledEventId));
        if (s)
          process.stderr.write(
            `[timeline] ${wf.workflowId.slice(-24).padEnd(24)} ${s.type.padEnd(22)} scheduled ${(s.at / 1000).toFixed(2)} started ${((s.started ?? 0) / 1000).toFixed(2)} done ${(ms(e.eventTime) / 1000).toFixed(2)}\n`,
          );
      }
    }
  }
}

/** Compiles the sources once (as `npm run build` would) so the worker runs as it does in production, without tsx. */
async function buildWorker(): Promise<string> {
  const outDir = 'bench/.tmp/dist';
  const tsc = spawn(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', outDir], { stdio: 'inherit' });
  const code = await new Promise((r) => tsc.once('exit', r));
  if (code !== 0) throw new Error(`tsc exited with ${String(code)}`);
  return join(outDir, 'src/cli/entry.js');
}

/**
 * The backfill through the real workflow and activities, served by `crmsync worker` in its own
 * process (as deployed), so its memory is the worker's alone: peak is the kernel's high-water
 * mark of that process, start to end.
 */
async function backfill(
  sim: Sim,
  contacts: number,
  workerEntry: string,
  address: string,
): Promise<{
  seconds: number;
  tailSeconds: number;
  rows: number;
  requests: number;
  peakRssMb: number;
  rssBeforeMb: number;
  workerCpuSeconds: number;
  workerThreadCpuSeconds?: Record<string, number>;
  coresBusy?: MachineCpu;
  launcherMb?: { peak: number; anon: number };
}> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-bench-'));
  const taskQueue = `bench-${contacts}-${Date.now()}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRM_MAX_CONCURRENCY: String(PARALLELISM),
    CRMSYNC_TASK_QUEUE: taskQueue,
    TEMPORAL_ADDRESS: address,
    CRMSYNC_LOG_LEVEL: process.env.BENCH_MEMORY_PROBE ? 'debug' : 'info',
    // Memory settings under test pass through: CRMSYNC_SYNC_*, CRMSYNC_WORKER_*, glibc's MALLOC_*, DuckDB's allocator's DUCKDB_JE_MALLOC_CONF, NODE_OPTIONS, LD_PRELOAD (another allocator).
    ...PASSED_ENV,
    ...PROFILE.env,
    // Node flags for the worker alone (a heap cap would also starve this script's own compile).
    ...(WORKER_NODE_OPTIONS ? { NODE_OPTIONS: WORKER_NODE_OPTIONS } : {}),
  };
  const worker = spawn(process.execPath, [workerEntry, 'worker'], { env, stdio: ['ignore', 'inherit', 'pipe'] });
  const exited = new Promise((r) => worker.once('exit', r));
  const probes: Record<string, number | Record<string, number>>[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      // The worker logs JSON lines on stderr.
      createInterface({ input: worker.stderr! }).on('line', (line) => {
        // Ready once its workers poll (it bundles the workflows first).
        if (line.includes('"workers polling"')) resolve();
        else if (line.includes('"warehouse memory"')) probes.push((JSON.parse(line) as { memory: Record<string, number | Record<string, number>> }).memory);
        else if (process.env.BENCH_WORKER_LOG || /"level":(40|50|60)/.test(line)) process.stderr.write(`[worker] ${line}\n`);
      });
      worker.once('exit', (code) => reject(new Error(`worker exited with ${String(code)}`)));
    });
    const config = loadConfig({ TEMPORAL_ADDRESS: address, CRMSYNC_TASK_QUEUE: taskQueue, CRMSYNC_DATA_DIR: dir });
    const queues = taskQueues(config);
    const connection = await Connection.connect({ address });
    try {
      const client = new Client({ connection, namespace: 'default' });
      // The simulator reports its request count once a second: let the floor's requests land first.
      await new Promise((r) => setTimeout(r, 1_200));
      const before = sim.requests();
      // The worker itself, when `crmsync worker` relaunched itself (its launcher is counted apart).
      const workerPid = launchedProcess(worker.pid!);
      const rssBefore = processMemoryMb(workerPid).rss;
      const cpuBefore = processCpuSeconds(workerPid);
      const threadsBefore = readThreadCpuMs(workerPid);
      const started = performance.now();
      const machineCpu = sampleMachineCpu(cpus().length);
      // With BENCH_TIMELINE: the worker's resident set every 250 ms (printed with the timeline).
      const rssSamples: string[] = [];
      const sampler = process.env.BENCH_TIMELINE
        ? setInterval(() => {
            try {
              rssSamples.push(`${((performance.now() - started) / 1000).toFixed(1)}s:${processMemoryMb(workerPid).rss}`);
            } catch {
              // the worker just exited
            }
          }, 250)
        : undefined;
      const result = await runSync({
        client,
        taskQueues: queues,
        input: { streams: ['contacts'], tuning: { perPage: PER_PAGE, parallelism: RANGES, maxPagesPerRange: 25 } },
      });
      const ended = performance.now();
      const coresBusy = machineCpu();
      const seconds = (ended - started) / 1000;
      const { peak } = processMemoryMb(workerPid);
      const workerCpuSeconds = processCpuSeconds(workerPid) - cpuBefore;
      const threadsAfter = readThreadCpuMs(workerPid);
      const workerThreadCpuSeconds = threadsBefore && threadsAfter ? threadCpuByName(workerPid, threadsBefore, threadsAfter) : undefined;
      if (process.env.BENCH_THREADS && threadsBefore && threadsAfter) {
        const names = readThreadNames(workerPid);
        const each = [...threadsAfter].map(([tid, ms]) => `${tid}:${names.get(tid) ?? '?'}:${((ms - (threadsBefore.get(tid) ?? 0)) / 1000).toFixed(2)}`);
        process.stderr.write(`[threads] ${each.join(' ')}\n`);
      }
      const launcher = workerPid !== worker.pid ? processMemoryMb(worker.pid!) : undefined;
      if (sampler) clearInterval(sampler);
      if (process.env.BENCH_TIMELINE) {
        await printTimeline(client, started);
        process.stderr.write(`[rss MB] ${rssSamples.join(' ')}\n`);
      }
      if (probes.length > 0) printProbes(probes);
      await new Promise((r) => setTimeout(r, 1_200));
      const s = result.streams[0];
      if (!s || s.rows < contacts) throw new Error(`backfill loaded ${s?.rows} of ${contacts}`);
      // The tail: the last page's request (as the simulator last reported its count growing) to the run's end.
      return {
        seconds,
        tailSeconds: (ended - sim.lastRequestAt()) / 1000,
        rows: s.rows,
        requests: sim.requests() - before,
        peakRssMb: peak,
        rssBeforeMb: rssBefore,
        workerCpuSeconds,
        ...(workerThreadCpuSeconds ? { workerThreadCpuSeconds } : {}),
        ...(coresBusy ? { coresBusy } : {}),
        ...(launcher ? { launcherMb: { peak: launcher.peak, anon: launcher.anon } } : {}),
      };
    } finally {
      await connection.close();
    }
  } finally {
    worker.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}

/** The largest of each memory figure the worker logged, and all of them at its largest resident set. */
function printProbes(probes: Record<string, number | Record<string, number>>[]): void {
  const max: Record<string, number> = {};
  for (const p of probes) for (const [k, v] of Object.entries(p)) if (typeof v === 'number') max[k] = Math.max(max[k] ?? 0, v);
  const atPeak = probes.reduce((a, b) => (Number(b.rssMb) > Number(a.rssMb) ? b : a));
  if (process.env.BENCH_MEMORY_PROBE === 'all') for (const p of probes) process.stderr.write(`[memory probe] ${JSON.stringify(p)}\n`);
  process.stderr.write(`[memory probe] ${probes.length} jobs; largest: ${JSON.stringify(max)}\n[memory probe] at the largest RSS: ${JSON.stringify(atPeak)}\n`);
}

/**
 * A dlt baseline (bench/dlt), when its venv exists: `python -m venv bench/.tmp/venv && bench/.tmp/venv/bin/pip install "dlt[duckdb]"`.
 * `rest_api_pipeline.py`: dlt's REST API source with its defaults; `tuned_pipeline.py`: a parallelized
 * transformer (BENCH_DLT_WORKERS, default 4), no child tables, append.
 */
async function runDlt(sim: Sim, script = 'rest_api_pipeline.py'): Promise<{ rows: number; seconds: number; dlt: string } | undefined> {
  if (!existsSync(DLT_PYTHON)) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-dlt-'));
  try {
    const child = spawn(DLT_PYTHON, [`bench/dlt/${script}`, sim.baseUrl, sim.credentials.username, String(PER_PAGE), dir], {
      env: { ...process.env, CRM_PASSWORD: sim.credentials.password },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`dlt pipeline exited with ${String(code)}`);
    return JSON.parse(out.trim().split('\n').pop() ?? '{}') as { rows: number; seconds: number; dlt: string };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

quietTemporalRuntime('warn');
const config = loadConfig({});
const server = await startDevServer({ cliPath: locateTemporalCliFromConfig(config).path, namespace: 'default' });
const workerEntry = await buildWorker();
const out: Record<string, unknown> = await readFile(RESULTS, 'utf8').then(
  (t) => JSON.parse(t) as Record<string, unknown>,
  () => ({}),
);
try {
  const scenarios: { name: 'none' | 'real'; latency: [number, number] }[] = [];
  if (LATENCY !== 'real') scenarios.push({ name: 'none', latency: [0, 0] });
  if (LATENCY !== 'none') scenarios.push({ name: 'real', latency: realLatencyMs(PER_PAGE) });
  for (const contacts of SIZES)
    for (const scenario of scenarios) {
      const sim = await startSim(contacts, scenario.name === 'real');
      try {
        const pages = Math.ceil(contacts / PER_PAGE);
        const floorSeconds = await rawFetchFloor(sim, pages);
        const loadBefore = loadavg();
        const run = await backfill(sim, contacts, workerEntry, server.address);
        // The machine is shared: the load average says how much else ran beside the figures.
        const loadAfter = loadavg();
        const dlt = contacts <= DLT_MAX ? await runDlt(sim) : undefined;
        const dltTuned = contacts <= DLT_MAX ? await runDlt(sim, 'tuned_pipeline.py') : undefined;
        const figures = {
          contacts,
          latency:
            scenario.name === 'none'
              ? 'none: the simulator answers at once (CPU-bound on 2 cores)'
              : `real deployment's, ${scenario.latency[0]}-${scenario.latency[1]} ms per page, less for smaller pages`,
          perPage: PER_PAGE,
          parallelism: PARALLELISM,
          rangeActivities: RANGES,
          pages,
          floorSeconds: +floorSeconds.toFixed(2),
          floorRowsPerSec: Math.round(contacts / floorSeconds),
          backfillSeconds: +run.seconds.toFixed(2),
          backfillRowsPerSec: Math.round(run.rows / run.seconds),
          // Last request served to the run's end (±0.1 s): the loads and publishes after the last page.
          tailSeconds: +run.tailSeconds.toFixed(2),
          // Ticks of 10 ms; unlike the wall time, barely moved by other work on a shared machine.
          workerCpuSeconds: +run.workerCpuSeconds.toFixed(2),
          // The same by thread name (Linux), the JavaScript thread as `main`: where the CPU went.
          ...(run.workerThreadCpuSeconds ? { workerThreadCpuSeconds: run.workerThreadCpuSeconds } : {}),
          // The whole machine's cores busy over the run, and the share of 100 ms samples with under
          // 1.25 of them busy: CPU-bound, the time one core waits on the other's work.
          ...(run.coresBusy ? { coresBusy: run.coresBusy } : {}),
          requests: run.requests,
          peakRssMb: run.peakRssMb,
          rssBeforeBackfillMb: run.rssBeforeMb,
          // `crmsync worker`'s launcher, idle beside the worker: its peak, and the anonymous part (its code pages are the worker's too).
          ...(run.launcherMb ? { launcherMb: run.launcherMb } : {}),
          loadAverage1m: { before: +loadBefore[0]!.toFixed(2), after: +loadAfter[0]!.toFixed(2) },
          ...(PROFILE_NAME !== 'default' ? { profile: PROFILE_NAME, workerEnv: PROFILE.env } : Object.keys(PASSED_ENV).length > 0 ? { workerEnv: PASSED_ENV } : {}),
          ...(WORKER_NODE_OPTIONS ? { workerNodeOptions: WORKER_NODE_OPTIONS } : {}),
          memoryMeasured: 'the crmsync worker process (compiled, run apart from this script): kernel high-water mark (VmHWM), start to end of the backfill',
          ratioToFloor: +(run.seconds / floorSeconds).toFixed(2),
          dlt: dlt ? { ...dlt, rowsPerSec: Math.round(dlt.rows / dlt.seconds), crmsyncSpeedup: +(dlt.seconds / run.seconds).toFixed(2) } : 'skipped',
          dltTuned: dltTuned ? { ...dltTuned, rowsPerSec: Math.round(dltTuned.rows / dltTuned.seconds), crmsyncSpeedup: +(dltTuned.seconds / run.seconds).toFixed(2) } : 'skipped',
          // Issue 19's: the floor ratio CPU-bound or with real latency, the 1M peak, and against the tuned dlt pipeline.
          targets: { ratioToFloor: scenario.name === 'none' ? 2.5 : 1.1, peakRssMbAt1M: 500, dltTunedSpeedup: 5 },
          at: new Date().toISOString(),
          node: process.version,
        };
        process.stdout.write(`${JSON.stringify(figures)}\n`);
        out[`contacts_${contacts}${scenario.name === 'real' ? '_real_latency' : ''}${PROFILE_NAME !== 'default' ? `_${PROFILE_NAME}` : ''}${LABEL ? `_${LABEL}` : ''}`] = figures;
        await mkdir('bench/results', { recursive: true });
        await writeFile(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
      } finally {
        await sim.stop();
      }
    }
} finally {
  await server.stop();
}
