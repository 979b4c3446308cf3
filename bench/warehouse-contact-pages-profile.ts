// Where a contact page load's time goes, statement by statement, in three phases over --contacts
// contacts as listing pages through loadContactPages in loads of --batch: every id new in
// ascending order (one range: the append), every id new in descending order of loads (parallel
// ranges: loads below ids already held), then all again with one in --changed changed (the
// incremental merge). Prints each phase's wall and process CPU ms and its statements' sums,
// largest first. The machine is shared: compare phases or runs back to back, with the load.
// Pages carry the row spans the fetch's scan gives (scanContactPage, as the sync hands them over);
// --bodies-only leaves them out, so DuckDB finds the rows by parsing each body.
// --explain: DuckDB's profiler on every statement, printing each statement over 20 ms with its
// three costliest operators (as EXPLAIN ANALYZE gives them), e.g. with --contacts 20000 --batch 20000.
//   node --import tsx bench/warehouse-contact-pages-profile.ts [--contacts 100000] [--batch 5000] [--per-page 500] [--changed 100] [--bodies-only] [--explain] [--label L]
// With --label, each phase's figures go to bench/results/warehouse-contact-pages-profile.json under it.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { openWarehouse } from '../src/warehouse/index.js';
import { timeStatements } from './time-statements.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = arg('contacts', 100_000);
const BATCH = arg('batch', 5_000);
const PER_PAGE = arg('per-page', 500);
const CHANGED = arg('changed', 100);
const EXPLAIN = process.argv.includes('--explain');
const BODIES_ONLY = process.argv.includes('--bodies-only');
const labelAt = process.argv.indexOf('--label');
const LABEL = labelAt >= 0 ? process.argv[labelAt + 1] : undefined;
const phases: Record<string, { wallSeconds: number; cpuSeconds: number; loadAverage: number }> = {};

interface ProfileNode {
  operator_name?: string;
  operator_timing?: number;
  operator_cardinality?: number;
  children?: ProfileNode[];
}
/** The statement's three costliest operators from DuckDB's JSON profile. */
function topOperators(file: string): string {
  const ops: { name: string; s: number; rows: number }[] = [];
  const walk = (n: ProfileNode): void => {
    if (n.operator_name) ops.push({ name: n.operator_name, s: n.operator_timing ?? 0, rows: n.operator_cardinality ?? 0 });
    for (const c of n.children ?? []) walk(c);
  };
  try {
    walk(JSON.parse(readFileSync(file, 'utf8')) as ProfileNode);
  } catch {
    return '';
  }
  return ops
    .sort((a, b) => b.s - a.s)
    .slice(0, 3)
    .map((o) => `${o.name} ${Math.round(o.s * 1000)} ms (${o.rows} rows)`)
    .join(', ');
}

function bodies(version: (id: number) => number): string[] {
  const out: string[] = [];
  for (let first = 1; first <= N; first += PER_PAGE) {
    const data = Array.from({ length: Math.min(PER_PAGE, N - first + 1) }, (_, k) => benchContact(first + k, version(first + k)).raw);
    out.push(JSON.stringify({ subscribers: { total: N, per_page: PER_PAGE, current_page: out.length + 1, data } }));
  }
  return out;
}

/** The pages as the sync hands them over, scanned before any is timed (the scan is the fetch's). */
function scanned(bodies: string[]): { body: string; rowSpans?: readonly number[] }[] {
  return bodies.map((body, i) => {
    const spans = BODIES_ONLY ? undefined : scanContactPage(body, { page: i + 1, perPage: PER_PAGE }, 'GET /subscribers').rowSpans;
    return spans ? { body, rowSpans: spans } : { body };
  });
}

const dir = mkdtempSync(join(tmpdir(), 'crmsync-pages-prof-'));
try {
  let w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC' });
  await w.migrate();
  let sums = new Map<string, { n: number; ms: number; cpu: number }>();
  const profile = join(dir, 'profile.json');
  const record = (sql: string, ms: number, cpu: number): void => {
    if (EXPLAIN && ms > 20 && !/^PRAGMA/.test(sql)) console.log(`${String(Math.round(ms)).padStart(6)} ms  ${sql.slice(0, 70)}\n         ${topOperators(profile)}`);
    const key = sql
      .replace(/'[^']*'/g, "'?'")
      .replace(/\d+/g, 'N')
      .slice(0, 110);
    const s = sums.get(key) ?? { n: 0, ms: 0, cpu: 0 };
    s.n++;
    s.ms += ms;
    s.cpu += cpu;
    sums.set(key, s);
  };
  const profiled = async (): Promise<void> => {
    if (EXPLAIN) await w.connection.run(`PRAGMA enable_profiling = 'json'; PRAGMA profiling_output = '${profile}'`);
  };
  await profiled();
  timeStatements(w, record);
  const perLoad = Math.max(1, Math.round(BATCH / PER_PAGE));
  const fresh = scanned(bodies(() => 0));
  const starts = (n: number) => Array.from({ length: Math.ceil(n / perLoad) }, (_, k) => k * perLoad);
  for (const [phase, pages, order] of [
    ['append (every id new, ascending)', fresh, starts(fresh.length)],
    ['new below held (every id new, loads descending)', fresh, starts(fresh.length).reverse()],
    [`merge (1 in ${CHANGED} changed)`, scanned(bodies((id) => (id % CHANGED === 0 ? 1 : 0))), starts(fresh.length)],
  ] as const) {
    if (phase.startsWith('new below')) {
      await w.close();
      rmSync(join(dir, 'crm.duckdb'), { force: true });
      w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC' });
      await w.migrate();
      await profiled();
      timeStatements(w, record);
    }
    sums = new Map();
    const t = performance.now();
    const cpu = process.cpuUsage();
    for (const s of order) {
      await w.loadContactPages(
        pages.slice(s, s + perLoad).map((p, i) => ({ page: s + i + 1, ...p })),
        { loadId: `p${s}`, syncedAt: new Date() },
      );
    }
    const u = process.cpuUsage(cpu);
    phases[phase] = { wallSeconds: Math.round(performance.now() - t) / 1000, cpuSeconds: Math.round((u.user + u.system) / 1000) / 1000, loadAverage: Math.round(loadavg()[0]! * 10) / 10 };
    console.log(
      `\n${phase}: ${N} contacts in loads of ${perLoad * PER_PAGE}: ${Math.round(performance.now() - t)} ms, cpu ${Math.round((u.user + u.system) / 1000)} ms, load average ${loadavg()[0]!.toFixed(1)}`,
    );
    for (const [sql, s] of [...sums].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, 16))
      console.log(`${String(Math.round(s.ms)).padStart(6)} ms  cpu ${String(Math.round(s.cpu)).padStart(6)} ms  x${s.n}  ${sql}`);
  }
  await w.close();
  if (LABEL) {
    const file = join(import.meta.dirname, 'results', 'warehouse-contact-pages-profile.json');
    const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs?: Record<string, unknown> }) : {};
    const run = { at: new Date().toISOString(), machine: { cpus: cpus().length, node: process.version }, rowSpans: !BODIES_ONLY, contacts: N, contactsPerLoad: perLoad * PER_PAGE, phases };
    writeFileSync(file, JSON.stringify({ ...previous, runs: { ...previous.runs, [LABEL]: run } }, null, 2) + '\n');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
