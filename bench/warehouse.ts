// Warehouse load benchmark: 1,000,000 contacts through loadContacts (stage + fingerprint + merge),
// DuckDB's own bulk read of the same data as the baseline, a reload with 1% changed, a lake
// publish, and peak memory. Figures go to stdout and bench/results/warehouse.json.
// `pages`: the contact load the sync runs (issue 19): the same contacts as listing page bodies
// through loadContactPages, in loads of --batch and of --small-batch rows, against DuckDB's own
// reads of the same page bodies (bench/warehouse-pages.ts). --only-pages runs only that.
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { openWarehouse } from '../src/warehouse/index.js';
import { benchContact } from './warehouse-contacts.js';
import { cpuMs, loadPages, readPageBodies, secs } from './warehouse-pages.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = arg('contacts', 1_000_000);
// ≥ 122,880 rows (one DuckDB row group) per load lets DuckDB write straight to the file instead
// of the WAL: measured 2.4x faster than 100,000-row batches.
const BATCH = arg('batch', 250_000);
// The sync's own batch: a few pages per load into a growing table.
const SMALL_BATCH = arg('small-batch', 5_000);
const SKIP_SMALL = process.argv.includes('--skip-small');
const ONLY_PAGES = process.argv.includes('--only-pages');
// e.g. --duckdb-memory 1GB: DuckDB's memory_limit for this run (its default is 80% of RAM).
const memIdx = process.argv.indexOf('--duckdb-memory');
const DUCKDB_MEMORY = memIdx >= 0 ? process.argv[memIdx + 1] : undefined;
async function limitMemory(w: { connection: { run(sql: string): Promise<unknown> } }): Promise<void> {
  if (DUCKDB_MEMORY && /^\d+(MB|GB)$/.test(DUCKDB_MEMORY)) await w.connection.run(`SET memory_limit = '${DUCKDB_MEMORY}'`);
}
const CHANGED_EVERY = 100; // 1% changed

const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-'));
const rate = (rows: number, ms: number) => Math.round(rows / (ms / 1000));

function batch(from: number, size: number, versionOf: (i: number) => number) {
  return Array.from({ length: size }, (_, k) => benchContact(from + k, versionOf(from + k)));
}

// Peak RSS per phase (sampled), so each phase reports its own memory, not the process's maximum.
let phasePeak = 0;
const sampler = setInterval(() => (phasePeak = Math.max(phasePeak, process.memoryUsage.rss())), 50);
function takePeakMB(): number {
  const peak = Math.max(phasePeak, process.memoryUsage.rss());
  phasePeak = process.memoryUsage.rss();
  return Math.round(peak / 2 ** 20);
}

// The sync path: N contacts in SMALL_BATCH-row loads into a fresh, growing table.
async function smallBatches(): Promise<{ seconds: number; cpuSeconds: number; rowsPerSecond: number; loads: number }> {
  const w = await openWarehouse({ dbPath: join(dir, 'small.duckdb'), lakePath: join(dir, 'small-lake') });
  try {
    await limitMemory(w);
    await w.migrate();
    let ms = 0;
    let cpu = 0;
    let loads = 0;
    for (let from = 1; from <= N; from += SMALL_BATCH) {
      const cs = batch(from, Math.min(SMALL_BATCH, N - from + 1), () => 0);
      const t = performance.now();
      const c = process.cpuUsage();
      await w.loadContacts(cs, { loadId: `small-${from}`, syncedAt: new Date() });
      ms += performance.now() - t;
      cpu += cpuMs(c);
      loads++;
      if (loads % 20 === 0) process.stderr.write(`small batches ${Math.min(from + SMALL_BATCH - 1, N)}/${N}\r`);
    }
    process.stderr.write('\n');
    return { seconds: secs(ms), cpuSeconds: secs(cpu), rowsPerSecond: rate(N, ms), loads };
  } finally {
    await w.close();
  }
}

/** The page path at the bulk and the sync's load sizes, and DuckDB's reads of the same page bodies. */
async function pagePhases() {
  const ndjsonPath = join(dir, 'pages.ndjson');
  const ndjson = createWriteStream(ndjsonPath);
  const bulk = await loadPages(join(dir, 'pages-bulk.duckdb'), join(dir, 'pages-bulk-lake'), N, BATCH, ndjson);
  ndjson.end();
  await once(ndjson, 'finish');
  const reads = await readPageBodies(dir, ndjsonPath, N);
  const sync = SKIP_SMALL ? undefined : await loadPages(join(dir, 'pages-sync.duckdb'), join(dir, 'pages-sync-lake'), N, SMALL_BATCH);
  const ratios = (a: { seconds: number; cpuSeconds: number }) =>
    Object.fromEntries(
      Object.entries(reads).map(([name, r]) => [name, { ratio: Math.round((r.seconds / a.seconds) * 1000) / 1000, cpuRatio: Math.round((r.cpuSeconds / a.cpuSeconds) * 1000) / 1000 }]),
    );
  return {
    what: 'listing page bodies (500 rows each) through loadContactPages, against DuckDB reading the same bodies into typed columns (bench/warehouse-pages.ts; it keeps no fingerprint, history or memberships, and raw only in objectsWithRaw); ratio = read time / load time',
    readsOfPageBodies: { ...reads, bytes: statSync(ndjsonPath).size },
    bulk: { ...bulk, toReads: ratios(bulk) },
    sync: sync ? { ...sync, toReads: ratios(sync) } : 'skipped',
    target: 'ratio >= 0.7 (issue 19)',
  };
}

async function main() {
  takePeakMB();
  if (ONLY_PAGES) {
    const pages = await pagePhases();
    const results = {
      benchmark: 'warehouse pages',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, node: process.version },
      contacts: N,
      pages,
      loadAverageAtEnd: loadavg().map((x) => Math.round(x * 10) / 10),
    };
    console.log(JSON.stringify(results, null, 2));
    writeFileSync(join(import.meta.dirname, 'results', N === 1_000_000 ? 'warehouse-pages.json' : `warehouse-pages-${N}.json`), JSON.stringify(results, null, 2) + '\n');
    return;
  }
  const pages = await pagePhases();
  const small = SKIP_SMALL ? undefined : { ...(await smallBatches()), batch: SMALL_BATCH, peakRssMB: takePeakMB() };
  const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  await limitMemory(w);
  await w.migrate();
  const ndjsonPath = join(dir, 'contacts.ndjson');
  const ndjson = createWriteStream(ndjsonPath);
  let genMs = 0;
  let loadMs = 0;
  let loadCpuMs = 0;
  let loadGrowthMB = 0;
  let loadPeakMB = 0;
  let stringifyMs = 0;
  const first = { inserted: 0, updated: 0, unchanged: 0 };
  for (let from = 1; from <= N; from += BATCH) {
    let t = performance.now();
    const cs = batch(from, Math.min(BATCH, N - from + 1), () => 0);
    genMs += performance.now() - t;
    const before = takePeakMB();
    const rssBefore = Math.round(process.memoryUsage.rss() / 2 ** 20);
    t = performance.now();
    const cpu = process.cpuUsage();
    const s = await w.loadContacts(cs, { loadId: `bench-${from}`, syncedAt: new Date() });
    loadMs += performance.now() - t;
    loadCpuMs += cpuMs(cpu);
    // What the load itself adds on top of the batch the caller already holds.
    loadGrowthMB = Math.max(loadGrowthMB, takePeakMB() - rssBefore);
    loadPeakMB = Math.max(loadPeakMB, before);
    first.inserted += s.inserted;
    first.updated += s.updated;
    first.unchanged += s.unchanged;
    // the same data as a file, for DuckDB's own bulk read; timed apart, to show the share of
    // the load that is JSON.stringify in JS
    t = performance.now();
    const text = cs.map((c) => JSON.stringify(c)).join('\n') + '\n';
    stringifyMs += performance.now() - t;
    if (!ndjson.write(text)) await once(ndjson, 'drain');
    process.stderr.write(`loaded ${Math.min(from + BATCH - 1, N)}/${N}\r`);
  }
  loadPeakMB = Math.max(loadPeakMB, takePeakMB());
  ndjson.end();
  await once(ndjson, 'finish');
  process.stderr.write('\n');

  // Baseline: DuckDB reading the same contacts from NDJSON into a typed table (same columns).
  const cols = `{id:'BIGINT', user_id:'BIGINT', hash:'VARCHAR', email:'VARCHAR', first_name:'VARCHAR', last_name:'VARCHAR', full_name:'VARCHAR', status:'VARCHAR', contact_type:'VARCHAR', phone:'VARCHAR', address_line_1:'VARCHAR', address_line_2:'VARCHAR', city:'VARCHAR', state:'VARCHAR', postal_code:'VARCHAR', country:'VARCHAR', date_of_birth:'DATE', photo:'VARCHAR', company_id:'BIGINT', total_points:'DOUBLE', life_time_value:'DOUBLE', tags:'JSON', lists:'JSON', custom_values:'JSON', created_at:'TIMESTAMPTZ', updated_at:'TIMESTAMPTZ', raw:'JSON'}`;
  let t = performance.now();
  let cpu = process.cpuUsage();
  await w.connection.run(`CREATE TABLE baseline_json AS SELECT * FROM read_json('${ndjsonPath}', format = 'newline_delimited', columns = ${cols})`);
  const baselineJsonMs = performance.now() - t;
  const baselineJsonCpuMs = cpuMs(cpu);
  const parquetPath = join(dir, 'contacts.parquet');
  await w.connection.run(`COPY baseline_json TO '${parquetPath}' (FORMAT parquet)`);
  t = performance.now();
  await w.connection.run(`CREATE TABLE baseline_parquet AS SELECT * FROM read_parquet('${parquetPath}')`);
  const baselineParquetMs = performance.now() - t;
  await w.connection.run('DROP TABLE baseline_json; DROP TABLE baseline_parquet');

  // Reload all with 1% changed.
  let mergeMs = 0;
  let mergeCpuMs = 0;
  const merge = { inserted: 0, updated: 0, unchanged: 0 };
  for (let from = 1; from <= N; from += BATCH) {
    const cs = batch(from, Math.min(BATCH, N - from + 1), (i) => (i % CHANGED_EVERY === 0 ? 1 : 0));
    t = performance.now();
    cpu = process.cpuUsage();
    const s = await w.loadContacts(cs, { loadId: `bench-merge-${from}`, syncedAt: new Date() });
    mergeMs += performance.now() - t;
    mergeCpuMs += cpuMs(cpu);
    merge.inserted += s.inserted;
    merge.updated += s.updated;
    merge.unchanged += s.unchanged;
  }

  const mergePeakMB = takePeakMB();
  t = performance.now();
  await w.publishLake();
  const publishFullMs = performance.now() - t;
  await w.loadContacts(
    batch(1, 1000, () => 2),
    { loadId: 'bench-small', syncedAt: new Date() },
  );
  t = performance.now();
  await w.publishLake();
  const publishIncrementalMs = performance.now() - t;
  const history = (await w.query('SELECT count(*) AS n FROM contacts_history'))[0]!.n;
  await w.close();

  const loadRate = rate(N, loadMs);
  const results = {
    benchmark: 'warehouse',
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    contacts: N,
    batch: BATCH,
    duckdbMemoryLimit: DUCKDB_MEMORY ?? 'default (80% of RAM)',
    ndjsonBytes: statSync(ndjsonPath).size,
    generateSeconds: secs(genMs),
    load: { seconds: secs(loadMs), cpuSeconds: secs(loadCpuMs), rowsPerSecond: loadRate, ...first, peakRssMBIncludingBenchData: loadPeakMB, maxRssGrowthDuringOneLoadMB: loadGrowthMB },
    jsStringifyOfSameContactsSeconds: secs(stringifyMs),
    baseline: {
      readJsonSeconds: secs(baselineJsonMs),
      readJsonRowsPerSecond: rate(N, baselineJsonMs),
      readJsonCpuSeconds: secs(baselineJsonCpuMs),
      readParquetSeconds: secs(baselineParquetMs),
      readParquetRowsPerSecond: rate(N, baselineParquetMs),
    },
    pages,
    ratioToReadJson: Math.round((loadRate / rate(N, baselineJsonMs)) * 1000) / 1000,
    ratioToReadParquet: Math.round((loadRate / rate(N, baselineParquetMs)) * 1000) / 1000,
    // CPU time is less at the mercy of other processes on a shared machine than wall time.
    cpuRatioToReadJson: Math.round((baselineJsonCpuMs / loadCpuMs) * 1000) / 1000,
    mergeOnePercentChanged: { seconds: secs(mergeMs), cpuSeconds: secs(mergeCpuMs), rowsPerSecond: rate(N, mergeMs), ...merge, peakRssMB: mergePeakMB },
    smallBatchLoads: small ?? 'skipped',
    historyRows: history,
    publishLake: { fullSeconds: secs(publishFullMs), incrementalSeconds: secs(publishIncrementalMs) },
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    loadAverageAtEnd: loadavg().map((x) => Math.round(x * 10) / 10),
    targetRowsPerSecond: 300_000,
  };
  console.log(JSON.stringify(results, null, 2));
  const out = join(import.meta.dirname, 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, N === 1_000_000 ? 'warehouse.json' : `warehouse-${N}.json`), JSON.stringify(results, null, 2) + '\n');
}

try {
  await main();
} finally {
  clearInterval(sampler);
  rmSync(dir, { recursive: true, force: true });
}
