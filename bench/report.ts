/**
 * Report benchmark: `crmsync report` on a warehouse of N contacts made the way a user makes one
 * (`crmsync demo --contacts N`: the simulator, an embedded Temporal, a full sync), timed as a
 * whole CLI run against a baseline in the same run: `crmsync query` of one count over
 * `contacts_current` (the same process start, warehouse open and view resolution, one query).
 * Also the file's size, and in this process the time to read the views and to render.
 *
 *   node --import tsx bench/report.ts [contacts]      (default: 100000)
 *
 * Prints the figures and writes bench/results/report.json.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderReport } from '../src/report/render-report.js';
import { withCatalog } from '../src/warehouse/index.js';
import { readReportData } from '../src/warehouse/report-data.js';
import { median } from './runner/median.js';

const CONTACTS = Number(process.argv[2] ?? 100_000);
const REPEATS = 5;
const RESULTS = 'bench/results/report.json';

function cli(args: string[], env: Record<string, string>): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e9) : reject(new Error(`crmsync ${args[0]} exited ${code}: ${err.slice(-2000)}`))));
  });
}

const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

const dir = await mkdtemp(join(tmpdir(), 'crmsync-bench-report-'));
try {
  const env = { CRMSYNC_DATA_DIR: dir, CRMSYNC_LOG_LEVEL: 'warn', CRMSYNC_DB: join(dir, 'demo', 'crm.duckdb'), CRMSYNC_LAKE: join(dir, 'demo', 'lake') };
  process.stderr.write(`building a ${CONTACTS}-contact warehouse with crmsync demo...\n`);
  const demoSeconds = await cli(['demo', '--contacts', String(CONTACTS), '--seed', '42'], { CRMSYNC_DATA_DIR: dir, CRMSYNC_LOG_LEVEL: 'warn' });
  const out = join(dir, 'report.html');
  const reportRuns: number[] = [];
  const queryRuns: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Alternated, so a busy moment of the machine falls on both.
    queryRuns.push(await cli(['query', '-q', 'SELECT count(*) FROM contacts_current'], env));
    reportRuns.push(await cli(['report', '--out', out], env));
  }
  const bytes = (await stat(out)).size;
  const html = await readFile(out, 'utf8');

  // In this process: reading the views against rendering the page.
  const reads: number[] = [];
  const renders: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // The report reads the lake's catalog, as `crmsync report` does.
    await withCatalog({ catalogPath: join(env.CRMSYNC_LAKE, 'catalog.duckdb') }, async (w) => {
      let t = process.hrtime.bigint();
      const data = await readReportData(w.connection);
      reads.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      renderReport(data, { now: new Date(), source: 'bench' });
      renders.push(Number(process.hrtime.bigint() - t) / 1e6);
    });
  }
  const result = {
    benchmark: 'report',
    date: new Date().toISOString(),
    contacts: CONTACTS,
    loadAverage1m: round(loadavg()[0]!, 2),
    repeats: REPEATS,
    demoSyncSeconds: round(demoSeconds, 1),
    reportSeconds: round(median(reportRuns)),
    baseline: { what: 'crmsync query "SELECT count(*) FROM contacts_current" (child process, same warehouse)', seconds: round(median(queryRuns)) },
    ratioToBaseline: round(median(reportRuns) / median(queryRuns), 2),
    fileBytes: bytes,
    fileKiB: Math.round(bytes / 1024),
    marks: (html.match(/class="mark/g) ?? []).length,
    tableRows: (html.match(/<tr>/g) ?? []).length,
    inProcess: { readViewsMs: round(median(reads), 1), renderMs: round(median(renders), 1) },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  await writeFile(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  process.stderr.write(`wrote ${RESULTS}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
