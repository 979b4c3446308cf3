/**
 * Backfill benchmark: contacts from the simulator (in a child process) into a fresh warehouse
 * through the real workflow, activities and a Temporal dev server, against a raw fetch floor:
 * the same pages fetched by a bare undici loop at the same concurrency, bodies discarded.
 *
 *   node --import tsx bench/backfill.ts [contacts...]      (default: 100000 1000000)
 *   BENCH_PER_PAGE=500 BENCH_PARALLELISM=4 ...
 *
 * Prints the figures and writes bench/results/backfill.json (merged per size).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Pool } from 'undici';
import { createSyncActivities } from '../activities/sync-activities.js';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/logger.js';
import { quietTemporalRuntime } from '../src/sync/quiet-temporal-runtime.js';
import { runSync } from '../src/sync/run-sync.js';
import { runSyncWorkers } from '../src/sync/run-sync-workers.js';
import { createSyncRuntime } from '../src/sync/sync-runtime.js';
import { bundleWorkflows } from '../src/temporal/bundle-workflows.js';
import { startDevServer } from '../src/temporal/dev-server.js';
import { locateTemporalCliFromConfig } from '../src/temporal/locate-cli.js';
import { taskQueues } from '../src/temporal/task-queues.js';
import { resolveWorkflowsPath } from '../src/temporal/worker.js';

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const SIZES = sizes.length > 0 ? sizes : [100_000, 1_000_000];
const PER_PAGE = Number(process.env.BENCH_PER_PAGE ?? 500);
const PARALLELISM = Number(process.env.BENCH_PARALLELISM ?? 4);
const RESULTS = 'bench/results/backfill.json';
const DLT_PYTHON = 'bench/.tmp/venv/bin/python';
/** dlt is slow: above this size it is skipped unless BENCH_DLT_MAX says otherwise. */
const DLT_MAX = Number(process.env.BENCH_DLT_MAX ?? 100_000);

interface Sim {
  baseUrl: string;
  credentials: { username: string; password: string };
  child: ChildProcess;
  requests(): number;
  stop(): Promise<void>;
}

async function startSim(contacts: number): Promise<Sim> {
  const child = spawn(process.execPath, ['--max-old-space-size=6144', '--import', 'tsx', 'bench/backfill-sim-server.ts', String(contacts)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let requests = 0;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    try {
      const parsed = JSON.parse(line) as { stats?: { requests: number } };
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

async function backfill(sim: Sim, contacts: number, bundleCode: string, address: string): Promise<{ seconds: number; rows: number; requests: number; peakRssMb: number; rssBeforeMb: number; peakJsHeapMb: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-bench-'));
  try {
    const config = loadConfig({
      CRM_BASE_URL: sim.baseUrl,
      CRM_USERNAME: sim.credentials.username,
      CRM_PASSWORD: sim.credentials.password,
      CRMSYNC_DB: join(dir, 'crm.duckdb'),
      CRMSYNC_LAKE: join(dir, 'lake'),
      CRMSYNC_DATA_DIR: dir,
      CRM_MAX_CONCURRENCY: String(PARALLELISM),
      CRMSYNC_TASK_QUEUE: `bench-${contacts}-${Date.now()}`,
      TEMPORAL_ADDRESS: address,
      CRMSYNC_LOG_LEVEL: 'warn',
    });
    const runtime = createSyncRuntime(config);
    const connection = await Connection.connect({ address });
    const native = await NativeConnection.connect({ address });
    const abort = new AbortController();
    const queues = taskQueues(config);
    const workers = runSyncWorkers({
      nativeConnection: native,
      namespace: 'default',
      taskQueues: queues,
      activities: {},
      warehouseActivities: createSyncActivities({ ...runtime, logger: silentLogger }),
      warehouseConcurrency: PARALLELISM + 4,
      workflowBundle: { code: bundleCode },
      signal: abort.signal,
    });
    let peakRss = process.memoryUsage().rss;
    let peakHeap = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed + m.external);
    }, 100);
    try {
      const client = new Client({ connection, namespace: 'default' });
      // The simulator reports its request count once a second: let the floor's requests land first.
      await new Promise((r) => setTimeout(r, 1_200));
      const before = sim.requests();
      const rssBefore = process.memoryUsage().rss;
      peakRss = rssBefore;
      const started = performance.now();
      const result = await runSync({
        client,
        taskQueues: queues,
        input: { streams: ['contacts'], tuning: { perPage: PER_PAGE, parallelism: PARALLELISM, maxPagesPerRange: 25 } },
      });
      const seconds = (performance.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, 1_200));
      const s = result.streams[0];
      if (!s || s.rows < contacts) throw new Error(`backfill loaded ${s?.rows} of ${contacts}`);
      return { seconds, rows: s.rows, requests: sim.requests() - before, peakRssMb: Math.round(peakRss / 2 ** 20), rssBeforeMb: Math.round(rssBefore / 2 ** 20), peakJsHeapMb: Math.round(peakHeap / 2 ** 20) };
    } finally {
      clearInterval(sampler);
      abort.abort();
      await workers;
      await runtime.close();
      await native.close();
      await connection.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The dlt baseline (bench/dlt), when its venv exists: `python -m venv bench/.tmp/venv && bench/.tmp/venv/bin/pip install "dlt[duckdb]"`. */
async function runDlt(sim: Sim): Promise<{ rows: number; seconds: number; dlt: string } | undefined> {
  if (!existsSync(DLT_PYTHON)) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-dlt-'));
  try {
    const child = spawn(DLT_PYTHON, ['bench/dlt/rest_api_pipeline.py', sim.baseUrl, sim.credentials.username, String(PER_PAGE), dir], {
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
const bundle = await bundleWorkflows(resolveWorkflowsPath());
const out: Record<string, unknown> = await readFile(RESULTS, 'utf8').then((t) => JSON.parse(t) as Record<string, unknown>, () => ({}));
try {
  for (const contacts of SIZES) {
    const sim = await startSim(contacts);
    try {
      const pages = Math.ceil(contacts / PER_PAGE);
      const floorSeconds = await rawFetchFloor(sim, pages);
      const run = await backfill(sim, contacts, bundle.code, server.address);
      const dlt = contacts <= DLT_MAX ? await runDlt(sim) : undefined;
      const figures = {
        contacts,
        perPage: PER_PAGE,
        parallelism: PARALLELISM,
        pages,
        floorSeconds: +floorSeconds.toFixed(2),
        floorRowsPerSec: Math.round(contacts / floorSeconds),
        backfillSeconds: +run.seconds.toFixed(2),
        backfillRowsPerSec: Math.round(run.rows / run.seconds),
        requests: run.requests,
        peakRssMb: run.peakRssMb,
        rssBeforeBackfillMb: run.rssBeforeMb,
        peakJsHeapMb: run.peakJsHeapMb,
        ratioToFloor: +(run.seconds / floorSeconds).toFixed(2),
        dlt: dlt ? { ...dlt, rowsPerSec: Math.round(dlt.rows / dlt.seconds), crmsyncSpeedup: +(dlt.seconds / run.seconds).toFixed(2) } : 'skipped',
        targets: { ratioToFloor: 1.25, peakRssMbAt1M: 400, dltSpeedup: 3 },
        at: new Date().toISOString(),
        node: process.version,
      };
      process.stdout.write(`${JSON.stringify(figures)}\n`);
      out[`contacts_${contacts}`] = figures;
      await mkdir('bench/results', { recursive: true });
      await writeFile(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
    } finally {
      await sim.stop();
    }
  }
} finally {
  await server.stop();
}
