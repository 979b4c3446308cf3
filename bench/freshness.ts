/**
 * Freshness benchmark (issue 15): at 100,000 contacts in the simulator's real mode (a child
 * process, with the real deployment's page latency), requests and seconds of
 *   - a no-change incremental run,
 *   - an incremental run after 1% of the contacts were edited (fields, tag-only, list-only),
 *   - a full reconcile sweep (the baseline: what finding those edits cost before),
 * side by side, through the real workflow, activities, embedded Temporal and DuckDB.
 *
 *   node --import tsx bench/freshness.ts [contacts]        (default 100000)
 *   BENCH_LATENCY=none ...   (no simulated server time)
 *   BENCH_NO_CHANGE_RUNS=5 ... (no-change runs; the figure is their median)
 *
 * Prints the figures and writes bench/results/freshness.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { quietTemporalRuntime } from '../src/sync/quiet-temporal-runtime.js';
import { runSync } from '../src/sync/run-sync.js';
import { withInProcessWorkers } from '../src/worker/with-in-process-workers.js';
import { withTemporal } from '../src/temporal/connect.js';
import { taskQueues } from '../src/temporal/task-queues.js';
import type { StreamResult, SyncWorkflowInput } from '../workflows/sync-types.js';

const CONTACTS = Number(process.argv[2] ?? 100_000);
const PER_PAGE = 250;
/**
 * The real deployment's GET /subscribers time by page size (fixtures README, "Timings"; about
 * 70-107 ms at per_page 250, less for a small page), or none.
 */
const LATENCY = process.env.BENCH_LATENCY === 'none' ? 'none' : 'real';
/** No-change runs timed (each a whole incremental run); the figure is their median. */
const NO_CHANGE_RUNS = Math.max(1, Number(process.env.BENCH_NO_CHANGE_RUNS ?? 5));
const EDITED = Math.round(CONTACTS / 100);

interface Sim {
  baseUrl: string;
  credentials: { username: string; password: string };
  ask(cmd: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

async function startSim(): Promise<Sim> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/freshness-sim-server.ts', String(CONTACTS), ...(LATENCY === 'real' ? ['real'] : [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: Interface = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const info = JSON.parse(await next()) as { baseUrl: string; credentials: { username: string; password: string } };
  return {
    ...info,
    ask: async (cmd) => {
      const answer = next();
      child.stdin!.write(`${cmd}\n`);
      return JSON.parse(await answer) as Record<string, unknown>;
    },
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

interface Figure {
  seconds: number;
  requests: number;
  subscriberRequests: number;
  mode: string;
  updated: number;
  fresh?: StreamResult['fresh'];
  /** Seconds of each run, when the figure is the median of several. */
  runs?: number[];
}

async function main(): Promise<void> {
  quietTemporalRuntime('warn');
  const sim = await startSim();
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-fresh-bench-'));
  const config = loadConfig({
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRM_ALLOW_INSECURE_HTTP: '1',
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_TASK_QUEUE: `bench-fresh-${Date.now()}`,
    CRMSYNC_LOG_LEVEL: 'warn',
    ...(process.env.TEMPORAL_ADDRESS ? { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS } : {}),
    ...(process.env.TEMPORAL_CLI_PATH ? { TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH } : {}),
    HOME: process.env.HOME ?? '',
    ...(process.env.XDG_CACHE_HOME ? { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME } : {}),
  });
  const logger = createLogger('warn');
  const figures: Record<string, Figure> = {};
  try {
    await withTemporal(
      config,
      async (t) =>
        // Workers in this process: a background worker would read its configuration from the environment, not this script's.
        withInProcessWorkers({ config, logger, client: t.client, nativeConnection: t.nativeConnection!, namespace: t.namespace, linger: false }, async () => {
          const run = async (label: string | null, input: Partial<SyncWorkflowInput>): Promise<void> => {
            const before = (await sim.ask('stats')) as { requests: number; byRoute: Record<string, number> };
            const started = performance.now();
            const r = await runSync({ client: t.client, taskQueues: taskQueues(config), input: { streams: ['contacts'], tuning: { perPage: PER_PAGE }, ...input } });
            const seconds = (performance.now() - started) / 1000;
            const after = (await sim.ask('stats')) as { requests: number; byRoute: Record<string, number> };
            const c = r.streams[0]!;
            const fig: Figure = {
              seconds: Number(seconds.toFixed(2)),
              requests: after.requests - before.requests,
              subscriberRequests: (after.byRoute['GET /subscribers'] ?? 0) - (before.byRoute['GET /subscribers'] ?? 0),
              mode: c.mode,
              updated: c.updated,
              ...(c.fresh ? { fresh: c.fresh } : {}),
            };
            console.log(`${(label ?? '(setup)').padEnd(22)} ${c.mode.padEnd(11)} ${fig.seconds.toFixed(2).padStart(7)} s ${String(fig.requests).padStart(6)} requests  updated ${c.updated}`);
            if (label) figures[label] = fig;
          };
          await run(null, {}); // backfill
          await run(null, {}); // first incremental: probes the updated_at ordering once
          // Several no-change runs (the sync users run most): their median is the figure.
          const noChange: Figure[] = [];
          for (let i = 0; i < NO_CHANGE_RUNS; i++) {
            await run('no-change', {});
            noChange.push(figures['no-change']!);
          }
          const bySeconds = [...noChange].sort((a, b) => a.seconds - b.seconds);
          figures['no-change'] = { ...bySeconds[Math.floor((bySeconds.length - 1) / 2)]!, runs: noChange.map((f) => f.seconds) };
          const edited = await sim.ask(`edit ${EDITED}`);
          await run('one-percent-edited', {});
          await run('full-reconcile', { reconcile: 'always' });
          // The incremental run must have found every edit: the sweep after it finds nothing left.
          if (figures['one-percent-edited']!.updated !== edited.edited || figures['full-reconcile']!.updated !== 0) {
            throw new Error(
              `the 1% run found ${figures['one-percent-edited']!.updated} of ${String(edited.edited)} edits; the sweep after it ${figures['full-reconcile']!.updated}; by check: ${JSON.stringify(figures['one-percent-edited']!.fresh)}`,
            );
          }
        }),
      { worker: true },
    );
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const base = figures['full-reconcile']!;
  const ratio = (f: Figure) => ({ seconds: Number((f.seconds / base.seconds).toFixed(4)), requests: Number((f.requests / base.requests).toFixed(4)) });
  const out = {
    contacts: CONTACTS,
    perPage: PER_PAGE,
    latency: LATENCY === 'real' ? 'the real deployment by page size (REAL_DEPLOYMENT_LATENCY)' : 'none',
    edited: EDITED,
    figures,
    ratioToFullReconcile: { 'no-change': ratio(figures['no-change']!), 'one-percent-edited': ratio(figures['one-percent-edited']!) },
    at: new Date().toISOString(),
  };
  console.log(`ratios to the full reconcile: no-change ${JSON.stringify(out.ratioToFullReconcile['no-change'])}, 1% edited ${JSON.stringify(out.ratioToFullReconcile['one-percent-edited'])}`);
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/freshness.json', `${JSON.stringify(out, null, 2)}\n`);
}

await main();
