// The lake publish's Parquet compression: CPU and size. Loads --contacts contacts (listing pages
// through loadContactPages, as a backfill does) into one warehouse file, then publishes the whole
// lake afresh once per codec and round, codecs in a rotated order each round, and prints for each
// the process CPU (every thread: DuckDB's included) and wall time of the publish, the lake's bytes,
// and both as ratios to the first codec's (the baseline, measured in the same rounds). The machine
// is shared: compare the ratios, and read loadAverage. DuckDB runs as the sync worker's owner does
// by default on a 2-core machine (--threads 1, --memory-limit 128MB; src/worker/owner-memory-defaults.ts).
//   node --import tsx bench/lake-compression.ts [--contacts 100000] [--rounds 3] [--codecs zstd,snappy,zstd-1,lz4] [--threads 1] [--memory-limit 128MB] [--label L]
// Figures go to stdout and bench/results/lake-compression.json, merged per label.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { LAKE_COMPRESSIONS, type LakeCompression } from '../src/warehouse/lake-compression.js';
import { openWarehouse } from '../src/warehouse/index.js';
import { publishLake } from '../src/warehouse/publish-lake.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('contacts', '100000'));
const ROUNDS = Number(arg('rounds', '3'));
const PER_PAGE = 500;
const CODECS = arg('codecs', 'zstd,snappy,zstd-1,lz4').split(',') as LakeCompression[];
for (const c of CODECS) if (!LAKE_COMPRESSIONS.includes(c)) throw new Error(`--codecs: ${c} is not one of ${LAKE_COMPRESSIONS.join(', ')}`);
const THREADS = Number(arg('threads', '1'));
const MEMORY_LIMIT = arg('memory-limit', '128MB');
if (!Number.isSafeInteger(THREADS) || THREADS < 1 || !/^\d+(\.\d+)?[KMG]i?B$/i.test(MEMORY_LIMIT)) throw new Error('--threads takes a positive integer and --memory-limit a size such as 128MB');
const LABEL = arg('label', `${N} contacts`);

const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-lake-'));
const w = await openWarehouse({ dbPath: join(dir, 'w.duckdb'), lakePath: join(dir, 'unused-lake'), siteTimeZone: 'UTC' });
await w.migrate();
await w.connection.run(`SET threads = ${THREADS}; SET memory_limit = '${MEMORY_LIMIT}'`);
for (let first = 1, page = 1; first <= N; page++) {
  const pages = [];
  for (let k = 0; k < 10 && first <= N; k++, page++, first += PER_PAGE) {
    const data = Array.from({ length: Math.min(PER_PAGE, N - first + 1) }, (_, j) => benchContact(first + j).raw);
    const body = JSON.stringify({ subscribers: { total: N, per_page: PER_PAGE, current_page: page, data } });
    pages.push({ page, body, rowSpans: scanContactPage(body, { page, perPage: PER_PAGE }, 'GET /subscribers').rowSpans! });
  }
  await w.loadContactPages(pages, { loadId: `load-${page}`, syncedAt: new Date() });
}
await w.checkpoint();

const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const bytesUnder = (path: string): number =>
  readdirSync(path, { withFileTypes: true }).reduce((sum, e) => sum + (e.isDirectory() ? bytesUnder(join(path, e.name)) : e.name.endsWith('.parquet') ? statSync(join(path, e.name)).size : 0), 0);

const TABLES = ['contacts', 'contacts_history', 'contact_tags', 'contact_lists'];
const rounds: Record<string, unknown>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const order = CODECS.map((_, i) => CODECS[(i + r) % CODECS.length]!);
  const round: Record<string, unknown> = {};
  for (const codec of order) {
    const lakePath = join(dir, `lake-${r}-${codec}`);
    await w.connection.run(
      `DELETE FROM _lake_dirty; INSERT INTO _lake_dirty SELECT t, p FROM (VALUES ${TABLES.map((t) => `('${t}')`).join(', ')}) a(t), (SELECT DISTINCT CAST(id // 50000 AS VARCHAR) AS p FROM contacts) b`,
    );
    const t = performance.now();
    const c = cpuSeconds();
    await publishLake({ connection: w.connection, lakePath, compression: codec }, TABLES);
    round[codec] = { cpuSeconds: +(cpuSeconds() - c).toFixed(3), seconds: +((performance.now() - t) / 1000).toFixed(3), lakeMb: +(bytesUnder(join(dir, `lake-${r}-${codec}`)) / 1e6).toFixed(2) };
    rmSync(lakePath, { recursive: true, force: true });
  }
  const base = round[CODECS[0]!] as { cpuSeconds: number; lakeMb: number };
  for (const codec of CODECS) {
    const x = round[codec] as { cpuSeconds: number; lakeMb: number };
    Object.assign(x, { cpuRatio: +(x.cpuSeconds / base.cpuSeconds).toFixed(3), sizeRatio: +(x.lakeMb / base.lakeMb).toFixed(3) });
  }
  round.loadAverage = loadavg().map((x) => Math.round(x * 10) / 10);
  console.log(JSON.stringify(round));
  rounds.push(round);
}
await w.close();
rmSync(dir, { recursive: true, force: true });

const run = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  contacts: N,
  threads: THREADS,
  memoryLimit: MEMORY_LIMIT,
  what: 'publishLake of the four contact tables to a fresh lake, per codec; CPU of this process (all threads), lake bytes; ratios to the first codec in the same round',
  codecs: CODECS,
  rounds,
};
recordLabelledRun('lake-compression', LABEL, run);
