// Where a contact page load's time goes, statement by statement: loads --contacts contacts as
// listing pages through loadContactPages in loads of --batch (the backfill's append), then loads
// them again with one in --changed changed (the incremental merge), and prints each statement's
// wall and process CPU ms summed over the loads, largest first. With --explain, prints DuckDB's
// EXPLAIN ANALYZE of the merge's statements for one load instead of running them plainly.
//   node --import tsx bench/warehouse-contact-pages-profile.ts [--contacts 100000] [--batch 5000] [--per-page 500] [--changed 100]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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

function bodies(version: (id: number) => number): string[] {
  const out: string[] = [];
  for (let first = 1; first <= N; first += PER_PAGE) {
    const data = Array.from({ length: Math.min(PER_PAGE, N - first + 1) }, (_, k) => benchContact(first + k, version(first + k)).raw);
    out.push(JSON.stringify({ subscribers: { total: N, per_page: PER_PAGE, current_page: out.length + 1, data } }));
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'crmsync-pages-prof-'));
try {
  const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC' });
  await w.migrate();
  let sums = new Map<string, { n: number; ms: number; cpu: number }>();
  timeStatements(w, (sql, ms, cpu) => {
    const key = sql.replace(/'[^']*'/g, "'?'").replace(/\d+/g, 'N').slice(0, 110);
    const s = sums.get(key) ?? { n: 0, ms: 0, cpu: 0 };
    s.n++;
    s.ms += ms;
    s.cpu += cpu;
    sums.set(key, s);
  });
  const perLoad = Math.max(1, Math.round(BATCH / PER_PAGE));
  for (const [phase, pages] of [
    ['append (every id new)', bodies(() => 0)],
    [`merge (1 in ${CHANGED} changed)`, bodies((id) => (id % CHANGED === 0 ? 1 : 0))],
  ] as const) {
    sums = new Map();
    const t = performance.now();
    const cpu = process.cpuUsage();
    for (let s = 0; s < pages.length; s += perLoad) {
      await w.loadContactPages(
        pages.slice(s, s + perLoad).map((body, i) => ({ page: s + i + 1, body })),
        { loadId: `p${s}`, syncedAt: new Date() },
      );
    }
    const u = process.cpuUsage(cpu);
    console.log(`\n${phase}: ${N} contacts in loads of ${perLoad * PER_PAGE}: ${Math.round(performance.now() - t)} ms, cpu ${Math.round((u.user + u.system) / 1000)} ms, load average ${loadavg()[0]!.toFixed(1)}`);
    for (const [sql, s] of [...sums].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, 16)) console.log(`${String(Math.round(s.ms)).padStart(6)} ms  cpu ${String(Math.round(s.cpu)).padStart(6)} ms  x${s.n}  ${sql}`);
  }
  await w.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
