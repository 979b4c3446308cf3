// DuckDB storage settings against the CPU of a backfill's warehouse side: --contacts contacts as
// listing pages through loadContactPages in loads of 5,000 (the sync's), into a fresh file, then
// the closing checkpoint and a publish of the four contact tables, once per variant and round
// (variants in a rotated order each round). Prints the process CPU (every thread, DuckDB's
// included) of each phase, the file's size and, per round, the total as a ratio to the first
// variant's. DuckDB runs as the sync worker's owner does by default on a 2-core machine (1 thread,
// a 128MB limit) unless a variant sets otherwise. The machine is shared: compare within a round.
// A variant is settings joined by '+':
//   base                              nothing changed
//   checkpoint_threshold='64MB'       any DuckDB `SET` (memory_limit='1GB', threads=2...)
//   rg=4096                           the writer's row group size (openWarehouse's rowGroupSize)
//   raw=fsst                          contacts.raw stored with this compression only (USING COMPRESSION)
//   node --import tsx bench/contact-storage-settings.ts [--contacts 100000] [--rounds 2] [--variants base,raw=fsst] [--label L]
// Figures go to stdout and bench/results/contact-storage-settings.json, merged per label.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import type { ContactPage } from '../src/warehouse/load-contact-pages.js';
import { openWarehouse, type WarehouseHandle } from '../src/warehouse/index.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('contacts', '100000'));
const ROUNDS = Number(arg('rounds', '2'));
const VARIANTS = arg('variants', "base,checkpoint_threshold='64MB',raw=fsst").split(',');
const LABEL = arg('label', `${N} contacts`);
const PER_PAGE = 500;

const loads: ContactPage[][] = [];
for (let first = 1, page = 1; first <= N;) {
  const pages: ContactPage[] = [];
  for (let k = 0; k < 10 && first <= N; k++, page++, first += PER_PAGE) {
    const data = Array.from({ length: Math.min(PER_PAGE, N - first + 1) }, (_, j) => benchContact(first + j).raw);
    const body = JSON.stringify({ subscribers: { total: N, per_page: PER_PAGE, current_page: page, data } });
    const rowSpans = scanContactPage(body, { page, perPage: PER_PAGE }, 'GET /subscribers').rowSpans;
    pages.push(rowSpans ? { page, body, rowSpans } : { page, body });
  }
  loads.push(pages);
}

const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Applies a variant's settings to a migrated warehouse. */
async function apply(w: WarehouseHandle, variant: string): Promise<void> {
  await w.connection.run(`SET threads = 1; SET memory_limit = '128MB'`);
  for (const s of variant.split('+')) {
    if (s === 'base' || s.startsWith('rg=')) continue;
    if (s.startsWith('raw=')) {
      const method = s.slice(4).replace(/[^a-z_]/gi, '');
      const ddl = readFileSync(join(import.meta.dirname, '../sql/002_contacts.sql'), 'utf8')
        .split('CREATE TABLE contacts_history')[0]!
        .replace(/--.*$/gm, '');
      await w.connection.run(`DROP TABLE contacts; ${ddl.replace(/\braw\s+JSON/, `raw JSON USING COMPRESSION ${method}`)}`);
    } else if (/^[a-z_]+\s*=\s*[\w'.]+$/i.test(s)) await w.connection.run(`SET ${s}`);
    else throw new Error(`variant part "${s}" is not base, rg=N, raw=METHOD or name=value`);
  }
}

const rounds: Record<string, unknown>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const round: Record<string, Record<string, number>> = {};
  for (const variant of VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]!)) {
    const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-storage-'));
    const rg = /rg=(\d+)/.exec(variant);
    const w = await openWarehouse({ dbPath: join(dir, 'w.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC', ...(rg ? { rowGroupSize: Number(rg[1]) } : {}) });
    await w.migrate();
    await apply(w, variant);
    const c0 = cpuSeconds();
    const t0 = performance.now();
    for (const [i, pages] of loads.entries()) await w.loadContactPages(pages, { loadId: `load-${i}`, syncedAt: new Date() });
    const c1 = cpuSeconds();
    await w.checkpoint();
    const c2 = cpuSeconds();
    await w.publishLake(['contacts', 'contacts_history', 'contact_tags', 'contact_lists']);
    const c3 = cpuSeconds();
    const seconds = (performance.now() - t0) / 1000;
    const fileMb = statSync(join(dir, 'w.duckdb')).size / 1e6;
    await w.close();
    rmSync(dir, { recursive: true, force: true });
    const f = (x: number) => +x.toFixed(2);
    round[variant] = { loadCpu: f(c1 - c0), checkpointCpu: f(c2 - c1), publishCpu: f(c3 - c2), cpuSeconds: f(c3 - c0), seconds: f(seconds), fileMb: f(fileMb) };
  }
  const base = round[VARIANTS[0]!]!.cpuSeconds!;
  for (const v of VARIANTS) round[v]!.cpuRatio = +(round[v]!.cpuSeconds! / base).toFixed(3);
  const out = { ...round, loadAverage: loadavg().map((x) => Math.round(x * 10) / 10) };
  console.log(JSON.stringify(out));
  rounds.push(out);
}

const run = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  contacts: N,
  what: 'loadContactPages in loads of 5,000, the closing checkpoint and a publish of the contact tables, per variant: CPU of this process (all threads); ratios to the first variant in the same round',
  variants: VARIANTS,
  rounds,
};
recordLabelledRun('contact-storage-settings', LABEL, run);
