// Contact listing pages into the warehouse, three ways over the same page bodies, in one process:
//   - pages: loadContactPages (DuckDB parses the rows, the tolerant schema in SQL), each page with
//     the row spans the fetch's scan gives (scanned before timing, as the scan is the fetch's);
//   - js: the client's path, JSON.parse + the contact schema, then loadContacts;
//   - baseline: DuckDB's own read_json of the same contact records with a typed column map.
// Each way loads into a fresh warehouse file, in loads of --batch contacts (the sync's 5,000 by
// default). Ratios are within this run (the machine is shared: see loadAverage).
// --zone: the site's time zone (default UTC; zone-less times are read in it).
//   node --import tsx bench/warehouse-contact-pages.ts [--contacts 200000] [--batch 5000] [--per-page 100] [--rounds 1] [--zone Z] [--label L]
// Figures go to stdout and bench/results/warehouse-contact-pages.json, merged per label.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePage } from '../src/crm/parse.js';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { contactSchema } from '../src/crm/schemas/contact.js';
import { createTimestampNormalizer } from '../src/crm/timestamps.js';
import type { Contact } from '../src/crm/types.js';
import { openWarehouse, type WarehouseHandle } from '../src/warehouse/index.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = arg('contacts', 200_000);
const BATCH = arg('batch', 5_000);
const PER_PAGE = arg('per-page', 100);
const ROUNDS = arg('rounds', 1);
const zoneAt = process.argv.indexOf('--zone');
const ZONE = zoneAt >= 0 ? process.argv[zoneAt + 1]! : 'UTC';
const labelAt = process.argv.indexOf('--label');
const LABEL = labelAt >= 0 ? process.argv[labelAt + 1]! : `${N} contacts, ${BATCH} per load`;

const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-pages-'));
const bodies: string[] = [];
const records: string[] = [];
for (let first = 1; first <= N; first += PER_PAGE) {
  const data = Array.from({ length: Math.min(PER_PAGE, N - first + 1) }, (_, k) => benchContact(first + k).raw);
  for (const d of data) records.push(JSON.stringify(d));
  bodies.push(JSON.stringify({ subscribers: { total: N, per_page: PER_PAGE, current_page: bodies.length + 1, last_page: Math.ceil(N / PER_PAGE), data } }));
}
const spans = bodies.map((body, i) => scanContactPage(body, { page: i + 1, perPage: PER_PAGE }, 'GET /subscribers').rowSpans);
const ndjson = join(dir, 'records.ndjson');
writeFileSync(ndjson, records.join('\n') + '\n');
records.length = 0;
const pagesPerLoad = Math.max(1, Math.round(BATCH / PER_PAGE));

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
interface Timing {
  seconds: number;
  cpuSeconds: number;
}
async function timed(fn: () => Promise<unknown>): Promise<Timing> {
  const t = performance.now();
  const c = cpuMs();
  await fn();
  return { seconds: Math.round(performance.now() - t) / 1000, cpuSeconds: Math.round(cpuMs() - c) / 1000 };
}

async function fresh(name: string): Promise<WarehouseHandle> {
  const w = await openWarehouse({ dbPath: join(dir, `${name}.duckdb`), lakePath: join(dir, `${name}-lake`), siteTimeZone: ZONE });
  await w.migrate();
  return w;
}

async function viaPages(w: WarehouseHandle): Promise<void> {
  for (let s = 0; s < bodies.length; s += pagesPerLoad) {
    const pages = bodies.slice(s, s + pagesPerLoad).map((body, i) => {
      const rowSpans = spans[s + i];
      return rowSpans ? { page: s + i + 1, body, rowSpans } : { page: s + i + 1, body };
    });
    await w.loadContactPages(pages, { loadId: `pages-${s}`, syncedAt: new Date() });
  }
}

const schema = contactSchema(createTimestampNormalizer(ZONE));
async function viaJs(w: WarehouseHandle): Promise<void> {
  for (let s = 0; s < bodies.length; s += pagesPerLoad) {
    const contacts = bodies
      .slice(s, s + pagesPerLoad)
      .flatMap((b, i) => parsePage(JSON.parse(b), ['subscribers'], schema, { page: s + i + 1, perPage: PER_PAGE }, 'GET /subscribers').items as Contact[]);
    await w.loadContacts(contacts, { loadId: `js-${s}`, syncedAt: new Date() });
  }
}

const COLUMNS = `{id:'BIGINT', user_id:'BIGINT', hash:'VARCHAR', email:'VARCHAR', first_name:'VARCHAR', last_name:'VARCHAR', full_name:'VARCHAR', status:'VARCHAR',
  contact_type:'VARCHAR', phone:'VARCHAR', address_line_1:'VARCHAR', address_line_2:'VARCHAR', city:'VARCHAR', state:'VARCHAR', postal_code:'VARCHAR', country:'VARCHAR',
  date_of_birth:'VARCHAR', photo:'VARCHAR', company_id:'BIGINT', total_points:'DOUBLE', life_time_value:'DOUBLE', tags:'JSON', lists:'JSON', custom_values:'JSON',
  created_at:'VARCHAR', updated_at:'VARCHAR'}`;

const rounds: Record<string, unknown>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const wp = await fresh(`pages-${r}`);
  const pages = await timed(() => viaPages(wp));
  const wj = await fresh(`js-${r}`);
  const js = await timed(() => viaJs(wj));
  const baseline = await timed(() => wj.connection.run(`CREATE TABLE baseline AS SELECT * FROM read_json('${ndjson}', format = 'newline_delimited', columns = ${COLUMNS})`));
  const same = await wp.query('SELECT count(*) AS n, sum(hash(_fingerprint)) AS f FROM contacts');
  const sameJs = await wj.query('SELECT count(*) AS n, sum(hash(_fingerprint)) AS f FROM contacts');
  if (JSON.stringify(same) !== JSON.stringify(sameJs)) throw new Error(`the two paths loaded different contacts: ${JSON.stringify(same)} against ${JSON.stringify(sameJs)}`);
  await wp.close();
  await wj.close();
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
  const round = {
    pages,
    js,
    baseline,
    pagesRatioToReadJson: ratio(baseline.seconds, pages.seconds),
    jsRatioToReadJson: ratio(baseline.seconds, js.seconds),
    pagesCpuRatioToReadJson: ratio(baseline.cpuSeconds, pages.cpuSeconds),
    jsCpuRatioToReadJson: ratio(baseline.cpuSeconds, js.cpuSeconds),
    pagesSpeedupOverJs: ratio(js.seconds, pages.seconds),
    loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
  };
  console.log(JSON.stringify(round));
  rounds.push(round);
}

const run = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  contacts: N,
  contactsPerLoad: pagesPerLoad * PER_PAGE,
  perPage: PER_PAGE,
  siteTimeZone: ZONE,
  rowSpans: spans.filter((x) => x !== undefined).length,
  what: 'the same listing page bodies: loadContactPages (DuckDB parses) against JSON.parse + contact schema + loadContacts (js) and read_json of the same records with a typed column map (baseline; keeps no raw record)',
  rounds,
};
recordLabelledRun('warehouse-contact-pages', LABEL, run);
rmSync(dir, { recursive: true, force: true });
