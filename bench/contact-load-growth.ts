/**
 * Whether a contact load costs more as the table grows: --contacts contacts loaded through the
 * owner with its backfill settings (one DuckDB thread, --memory limit, the writer's checkpoint
 * threshold) as listing pages of 500, ten pages a load, in the order four parallel ranges of 25
 * pages deliver them (as `bench/backfill.ts` does, without the simulator, Temporal or the lake
 * publishes). Every --every contacts it prints the process CPU of each kind of statement since the
 * last line; the main thread only waits for DuckDB meanwhile, so a statement's process CPU is
 * DuckDB's. A row that grows from line to line is what grows with the table.
 *
 *   node --import tsx bench/contact-load-growth.ts [--contacts 1000000] [--every 50000] [--memory 128MB] [--label L]
 *
 * Records the lines under the label (default `default`) in bench/results/contact-load-growth.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { openWarehouseOwner } from '../src/warehouse/index.js';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { timeStatements } from './time-statements.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const CONTACTS = Number(arg('contacts', '1000000'));
const EVERY = Number(arg('every', '50000'));
const MEMORY = arg('memory', '128MB');
const LABEL = arg('label', 'default');
const PER_PAGE = 500;
const PAGES_PER_LOAD = 10;
const RANGE_PAGES = 25;
const RANGES = 4;

/** Page numbers (from 0) in the order four ranges of 25 pages, fetched side by side, deliver them. */
function rangeOrder(pages: number): number[] {
  const order: number[] = [];
  for (let g = 0; g < pages; g += RANGES * RANGE_PAGES)
    for (let k = 0; k < RANGE_PAGES; k++)
      for (let r = 0; r < RANGES; r++) {
        const p = g + r * RANGE_PAGES + k;
        if (p < pages) order.push(p);
      }
  return order;
}

function page(p: number): { page: number; body: string; rowSpans?: readonly number[] } {
  const data = Array.from({ length: PER_PAGE }, (_, k) => benchContact(p * PER_PAGE + k + 1, 0).raw);
  const body = JSON.stringify({ subscribers: { total: CONTACTS, per_page: PER_PAGE, current_page: p + 1, data } });
  return { page: p + 1, body, rowSpans: scanContactPage(body, { page: p + 1, perPage: PER_PAGE }, 'GET /subscribers').rowSpans };
}

/** A statement's kind: its text up to the first table name it writes or reads. */
const kind = (sql: string): string => (/^COMMIT/.test(sql) ? 'COMMIT' : sql.replace(/\s+/g, ' ').slice(0, 48));

const dir = mkdtempSync(join(tmpdir(), 'crmsync-load-growth-'));
const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC', threads: 1, memoryLimit: MEMORY });
const sums = new Map<string, number>();
await owner.run(async (w) => timeStatements(w, (sql, _ms, cpuMs) => sums.set(kind(sql), (sums.get(kind(sql)) ?? 0) + cpuMs)));
const lines: { contacts: number; loadAverage: number; cpuMsByStatement: Record<string, number> }[] = [];
try {
  const order = rangeOrder(Math.ceil(CONTACTS / PER_PAGE));
  let last = new Map<string, number>();
  for (let i = 0; i < order.length; i += PAGES_PER_LOAD) {
    const pages = order.slice(i, i + PAGES_PER_LOAD).map(page);
    await owner.run((w) => w.loadContactPages(pages, { loadId: `load-${i}`, syncedAt: new Date() }));
    const loaded = Math.min(i + PAGES_PER_LOAD, order.length) * PER_PAGE;
    if (loaded % EVERY !== 0 && i + PAGES_PER_LOAD < order.length) continue;
    const since = Object.fromEntries(
      [...sums]
        .map(([k, v]) => [k, Math.round(v - (last.get(k) ?? 0))] as const)
        .filter(([, v]) => v >= 20)
        .sort((a, b) => b[1] - a[1]),
    );
    last = new Map(sums);
    lines.push({ contacts: loaded, loadAverage: Math.round(loadavg()[0]! * 10) / 10, cpuMsByStatement: since });
    const top = Object.entries(since)
      .slice(0, 4)
      .map(([k, v]) => `${v} ms ${k}`)
      .join(' | ');
    console.log(`${loaded} contacts, load ${loadavg()[0]!.toFixed(1)}: ${top}`);
  }
} finally {
  await owner.close();
  rmSync(dir, { recursive: true, force: true });
}
const file = recordLabelledRun('contact-load-growth', LABEL, { at: new Date().toISOString(), contacts: CONTACTS, every: EVERY, memoryLimit: MEMORY, threads: 1, lines });
console.log(`recorded in ${file}`);
