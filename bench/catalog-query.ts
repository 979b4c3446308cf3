/**
 * Issue 18, done when: "A query against the catalog, started during a long sync, answers within
 * 1 s." A reader process opens the catalog and runs two queries (open + query, the process
 * already started) over and over: a plain count of live contacts (`light`) and a grouping over
 * `contacts_current`, which joins every contact's tag and list names (`analyst`):
 *   - baseline: with no sync running, after a backfill published the lake;
 *   - during: while a full re-sync of the same contacts runs against a simulator with the real
 *     deployment's page latency (its worker owns the DuckDB file and publishes as it goes).
 * Records the latencies and their ratio to the baseline, and the machine's load average.
 *
 *   node --import tsx bench/catalog-query.ts [contacts] [samples]     (default 50000 20)
 *
 * Prints the figures and writes bench/results/catalog-query.json.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startSimulator } from '../src/simulator/index.js';
import { quietTemporalRuntime } from '../src/sync/quiet-temporal-runtime.js';
import { runSync } from '../src/sync/run-sync.js';
import { withInProcessWorkers } from '../src/worker/with-in-process-workers.js';
import { withTemporal } from '../src/temporal/connect.js';
import { taskQueues } from '../src/temporal/task-queues.js';

const CONTACTS = Number(process.argv[2] ?? 50_000);
const SAMPLES = Number(process.argv[3] ?? 20);
const PER_PAGE = 250;
/** The real deployment's GET /subscribers time (fixtures README), interpolated to per_page 250. */
const LATENCY = { min: 70, max: 107 };
const QUERIES = {
  light: 'SELECT count(*) AS contacts FROM contacts WHERE _deleted_at IS NULL',
  analyst: 'SELECT status, count(*) AS contacts, count(*) FILTER (WHERE len(tag_titles) > 0) AS tagged FROM contacts_current GROUP BY ALL ORDER BY ALL',
} as const;
type QueryName = keyof typeof QUERIES;

interface Reader {
  query(sql: string): Promise<{ ms: number; openMs: number; rows: Record<string, unknown>[] }>;
  stop(): Promise<void>;
}

function startReader(catalogPath: string): Reader {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/catalog-query-reader.ts', catalogPath], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => waiting.shift()?.(l));
  return {
    query: (sql) =>
      new Promise((resolve) => {
        waiting.push((l) => resolve(JSON.parse(l) as { ms: number; openMs: number; rows: Record<string, unknown>[] }));
        child.stdin.write(`${JSON.stringify(sql)}\n`);
      }),
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin.end();
      await exited;
    },
  };
}

function summary(ms: number[]): { samples: number; medianMs: number; p95Ms: number; maxMs: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  const r = (x: number) => Number(x.toFixed(1));
  return { samples: s.length, medianMs: r(at(0.5)), p95Ms: r(at(0.95)), maxMs: r(s[s.length - 1]!) };
}

async function main(): Promise<void> {
  quietTemporalRuntime('warn');
  const sim = await startSimulator({ seed: 18, contacts: CONTACTS, faults: { latencyMs: LATENCY } });
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-catalog-bench-'));
  const config = loadConfig({
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRM_ALLOW_INSECURE_HTTP: '1',
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    CRMSYNC_TASK_QUEUE: `bench-catalog-${Date.now()}`,
    CRMSYNC_LOG_LEVEL: 'warn',
    ...(process.env.TEMPORAL_ADDRESS ? { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS } : {}),
    ...(process.env.TEMPORAL_CLI_PATH ? { TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH } : {}),
    HOME: process.env.HOME ?? '',
    ...(process.env.XDG_CACHE_HOME ? { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME } : {}),
  });
  const logger = createLogger('warn');
  const reader = startReader(config.catalogPath);
  const baseline: Record<QueryName, number[]> = { light: [], analyst: [] };
  const during: Record<QueryName, number[]> = { light: [], analyst: [] };
  /** Time to open the catalog (fresh DuckDB, ATTACH read-only, read its publish time), per sample. */
  const opens = { baseline: [] as number[], duringSync: [] as number[] };
  let phase: keyof typeof opens = 'baseline';
  /** Both queries once; throws unless each counted every contact (the catalog answers with the published rows). */
  const sample = async (): Promise<Record<QueryName, number>> => {
    const out = {} as Record<QueryName, number>;
    for (const name of Object.keys(QUERIES) as QueryName[]) {
      const q = await reader.query(QUERIES[name]);
      const n = q.rows.reduce((sum, r) => sum + Number(r.contacts), 0);
      if (n !== CONTACTS) throw new Error(`${name} counted ${n} contacts in the catalog, not ${CONTACTS}`);
      out[name] = q.ms;
      opens[phase].push(q.openMs);
    }
    return out;
  };
  let syncSeconds = 0;
  let loadDuring: number[] = [];
  try {
    await withTemporal(
      config,
      async (t) =>
        // Workers in this process: a background worker would read its configuration from the environment, not this script's.
        withInProcessWorkers({ config, logger, client: t.client, nativeConnection: t.nativeConnection!, namespace: t.namespace, linger: false }, async () => {
          const sync = () => runSync({ client: t.client, taskQueues: taskQueues(config), input: { streams: ['contacts', 'tags', 'lists'], full: true, tuning: { perPage: PER_PAGE } } });
          await sync(); // the backfill that publishes the lake and writes the catalog
          await sample(); // warm-up: the reader's first import of DuckDB
          opens.baseline.length = 0;
          for (let i = 0; i < SAMPLES; i++) {
            const s = await sample();
            baseline.light.push(s.light);
            baseline.analyst.push(s.analyst);
          }
          let running = true;
          phase = 'duringSync';
          const started = performance.now();
          const resync = sync().finally(() => {
            running = false;
            syncSeconds = (performance.now() - started) / 1000;
          });
          // Sample only while the re-sync is reading pages: that is the "long sync".
          while (running && during.light.length < SAMPLES) {
            const s = await sample();
            if (!running) break;
            during.light.push(s.light);
            during.analyst.push(s.analyst);
            await new Promise((r) => setTimeout(r, 250));
          }
          loadDuring = loadavg();
          await resync;
        }),
      { worker: true },
    );
  } finally {
    await reader.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
  if (during.light.length < 3) throw new Error(`only ${during.light.length} samples ran during the re-sync (${syncSeconds.toFixed(1)} s); raise the contact count`);
  const figures = Object.fromEntries(
    (Object.keys(QUERIES) as QueryName[]).map((name) => {
      const b = summary(baseline[name]);
      const d = summary(during[name]);
      const ratio = { median: Number((d.medianMs / b.medianMs).toFixed(2)), p95: Number((d.p95Ms / b.p95Ms).toFixed(2)), max: Number((d.maxMs / b.maxMs).toFixed(2)) };
      console.log(
        `${name.padEnd(8)} no sync: median ${b.medianMs} ms, p95 ${b.p95Ms} ms | during the re-sync: median ${d.medianMs} ms, p95 ${d.p95Ms} ms, max ${d.maxMs} ms | ratio ${JSON.stringify(ratio)}`,
      );
      return [name, { query: QUERIES[name], baseline: b, duringSync: d, ratioToBaseline: ratio }];
    }),
  );
  const out = {
    contacts: CONTACTS,
    perPage: PER_PAGE,
    latencyMs: [LATENCY.min, LATENCY.max],
    measures: 'open the catalog read-only in a fresh DuckDB + run the query, in an already started reader process',
    resyncSeconds: Number(syncSeconds.toFixed(1)),
    figures,
    openCatalog: { baseline: summary(opens.baseline), duringSync: summary(opens.duringSync) },
    machine: { cpus: cpus().length, loadAverageDuring: loadDuring.map((x) => Number(x.toFixed(2))), note: 'shared machine: several engineers run tests and benchmarks at once' },
    at: new Date().toISOString(),
  };
  console.log(`opening the catalog: median ${out.openCatalog.baseline.medianMs} ms with no sync, ${out.openCatalog.duringSync.medianMs} ms during it`);
  console.log(`re-sync ${out.resyncSeconds} s; load average ${loadDuring.map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/catalog-query.json', `${JSON.stringify(out, null, 2)}\n`);
}

await main();
