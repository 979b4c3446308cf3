// What the warehouse's data model costs DuckDB at the least, against what the sync's loads cost,
// for issue 19's CPU-bound target. One process, one DuckDB thread, a 128MB limit, the same
// listing pages (--contacts bench contacts, pages of 500 with the fetch's row spans):
// - `sync`: the owner's loads of 5,000 (`loadContactPages`: the tolerant schema, fingerprint,
//   memberships, the owner's checkpoints), one publish of the lake's bucketed tables, the close;
// - `minimal`: the same rows staged the same way, typed by DuckDB's own `json_transform` into one
//   table (no tolerance, no fingerprint, no memberships or history), committed every 5,000 rows
//   with a checkpoint every 56,320, then two Parquet COPYs of each 25,000-id bucket (the lake's
//   `contacts` and a stand-in for its history);
// - `rowGroups`: the minimal loads (pages of 512) committed one by one, or twelve to a
//   transaction, so that each commit appends exactly one of the writer's 61,440-row groups and
//   DuckDB writes them to the file rather than to the write-ahead log.
// Process CPU seconds, rounds alternated. Usage:
//   node --import tsx bench/warehouse-floor.ts [--contacts 100000] [--rounds 2] [--label L]
// Figures to stdout and bench/results/warehouse-floor.json (under --label, default the date).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { BUCKETED_LAKE_TABLES } from '../src/warehouse/lake-layout.js';
import { stageContactRows } from '../src/warehouse/stage-contact-rows.js';
import { CHECKPOINT_GROWTH_ROWS, openWarehouseOwner } from '../src/warehouse/warehouse-owner.js';
import { WRITER_ROW_GROUP_SIZE } from '../src/warehouse/open-warehouse.js';
import { recordLabelledRun } from './runner/record-labelled-run.js';
import { benchContact } from './warehouse-contacts.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const N = arg('contacts', 100_000);
const ROUNDS = arg('rounds', 2);
const labelAt = process.argv.indexOf('--label');
const LABEL = labelAt >= 0 ? process.argv[labelAt + 1]! : new Date().toISOString().slice(0, 10);
const LOAD_PAGES = 10;
/** Loads of a row-group transaction: 12 loads of 10 pages of 512 are 61,440 rows. */
const GROUP_LOADS = WRITER_ROW_GROUP_SIZE / (LOAD_PAGES * 512);

interface Page {
  page: number;
  body: string;
  rowSpans: readonly number[];
}

function listingPages(contacts: number, perPage: number): Page[] {
  return Array.from({ length: Math.ceil(contacts / perPage) }, (_, p) => {
    const rows = Math.min(perPage, contacts - p * perPage);
    const data = Array.from({ length: rows }, (_, k) => benchContact(p * perPage + k + 1, 0).raw);
    const body = JSON.stringify({ subscribers: { total: contacts, per_page: perPage, current_page: p + 1, data } });
    return { page: p + 1, body, rowSpans: scanContactPage(body, { page: p + 1, perPage }, 'GET /subscribers').rowSpans! };
  });
}

const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const round2 = (x: number): number => Math.round(x * 100) / 100;

/** The sync's own loads, publish and close. */
async function syncPipeline(pages: readonly Page[]): Promise<{ loads: number; publish: number; close: number; total: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-floor-'));
  try {
    const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC', memoryLimit: '128MB', threads: 1 });
    const c0 = cpuSeconds();
    for (let i = 0; i < pages.length; i += LOAD_PAGES) {
      await owner.run((w) => w.loadContactPages(pages.slice(i, i + LOAD_PAGES), { loadId: `load-${i}`, syncedAt: new Date() }));
    }
    await owner.run(async () => undefined); // the last load's checkpoint, if it called for one
    const c1 = cpuSeconds();
    await owner.run((w) => w.publishLake(BUCKETED_LAKE_TABLES));
    const c2 = cpuSeconds();
    await owner.close();
    const c3 = cpuSeconds();
    return { loads: round2(c1 - c0), publish: round2(c2 - c1), close: round2(c3 - c2), total: round2(c3 - c0) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** DuckDB's own typing of the contact fields, one table, no tolerance. */
const STRUCTURE = JSON.stringify({
  id: 'BIGINT',
  user_id: 'BIGINT',
  hash: 'VARCHAR',
  email: 'VARCHAR',
  first_name: 'VARCHAR',
  last_name: 'VARCHAR',
  full_name: 'VARCHAR',
  status: 'VARCHAR',
  contact_type: 'VARCHAR',
  phone: 'VARCHAR',
  address_line_1: 'VARCHAR',
  address_line_2: 'VARCHAR',
  city: 'VARCHAR',
  state: 'VARCHAR',
  postal_code: 'VARCHAR',
  country: 'VARCHAR',
  date_of_birth: 'DATE',
  created_at: 'TIMESTAMP',
  updated_at: 'TIMESTAMP',
  last_activity: 'TIMESTAMP',
  total_points: 'DOUBLE',
  life_time_value: 'DOUBLE',
  company_id: 'BIGINT',
  tags: [{ id: 'BIGINT' }],
  lists: [{ id: 'BIGINT' }],
  custom_values: 'JSON',
});

async function openMinimal(dir: string): Promise<{ c: DuckDBConnection; close: () => void; wal: () => number }> {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  const file = join(dir, 'minimal.duckdb');
  await c.run(`ATTACH '${file}' AS minimal (ROW_GROUP_SIZE ${WRITER_ROW_GROUP_SIZE}); USE minimal; SET threads = 1; SET memory_limit = '128MB'; SET checkpoint_threshold = '1000GB'`);
  await c.run(`CREATE TABLE t AS SELECT unnest(json_transform('{}', '${STRUCTURE}')), CAST('{}' AS JSON) AS raw LIMIT 0`);
  return {
    c,
    close: () => {
      c.closeSync();
      instance.closeSync();
    },
    wal: () => {
      try {
        return statSync(`${file}.wal`).size;
      } catch {
        return 0;
      }
    },
  };
}

/** Stages and types one load's pages into `t`, in the transaction open on `c`. */
async function minimalLoad(c: DuckDBConnection, pages: readonly Page[]): Promise<void> {
  await stageContactRows(
    c,
    'stage_rows',
    pages.map((p, seq) => ({ seq, page: p.page, body: p.body, spans: p.rowSpans })),
  );
  await c.run(`INSERT INTO t SELECT unnest(json_transform(raw, '${STRUCTURE}')), raw FROM stage_rows; DROP TABLE stage_rows`);
}

async function minimalPipeline(pages: readonly Page[]): Promise<{ loads: number; publish: number; total: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-floor-'));
  const { c, close } = await openMinimal(dir);
  try {
    const c0 = cpuSeconds();
    let since = 0;
    for (let i = 0; i < pages.length; i += LOAD_PAGES) {
      await c.run('BEGIN');
      await minimalLoad(c, pages.slice(i, i + LOAD_PAGES));
      await c.run('COMMIT');
      since += LOAD_PAGES * 500;
      if (since >= CHECKPOINT_GROWTH_ROWS) {
        await c.run('CHECKPOINT');
        since = 0;
      }
    }
    await c.run('CHECKPOINT');
    const c1 = cpuSeconds();
    for (let b = 0; b * 25_000 < N; b++) {
      for (const table of ['contacts', 'history']) {
        await c.run(`COPY (SELECT * FROM t WHERE id >= ${b * 25_000} AND id < ${(b + 1) * 25_000}) TO '${join(dir, `${table}-${b}.parquet`)}' (FORMAT parquet, ROW_GROUP_SIZE 5000, COMPRESSION zstd)`);
      }
    }
    const c2 = cpuSeconds();
    return { loads: round2(c1 - c0), publish: round2(c2 - c1), total: round2(c2 - c0) };
  } finally {
    close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The minimal loads committed `perCommit` at a time, checkpoints as the owner spaces them. */
async function rowGroupLoads(pages: readonly Page[], perCommit: number): Promise<{ cpu: number; walMbMax: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-floor-'));
  const { c, close, wal } = await openMinimal(dir);
  try {
    const c0 = cpuSeconds();
    let [since, walMax] = [0, 0];
    for (let i = 0; i < pages.length; i += LOAD_PAGES * perCommit) {
      await c.run('BEGIN');
      for (let k = 0; k < perCommit && i + k * LOAD_PAGES < pages.length; k++) {
        await minimalLoad(c, pages.slice(i + k * LOAD_PAGES, i + (k + 1) * LOAD_PAGES));
      }
      await c.run('COMMIT');
      walMax = Math.max(walMax, wal());
      since += LOAD_PAGES * 512 * perCommit;
      if (since >= CHECKPOINT_GROWTH_ROWS) {
        await c.run('CHECKPOINT');
        since = 0;
      }
    }
    await c.run('CHECKPOINT');
    return { cpu: round2(cpuSeconds() - c0), walMbMax: round2(walMax / 1e6) };
  } finally {
    close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const pages = listingPages(N, 500);
// Whole row groups of pages of 512: at least four, so that the commits' spacing shows.
const groupRows = Math.max(4, Math.ceil(N / WRITER_ROW_GROUP_SIZE)) * WRITER_ROW_GROUP_SIZE;
const pages512 = listingPages(groupRows, 512);
const load = loadavg()[0]!;
const rounds: Record<string, unknown>[] = [];
for (let r = 1; r <= ROUNDS; r++) {
  const sync = await syncPipeline(pages);
  const minimal = await minimalPipeline(pages);
  const perLoad = await rowGroupLoads(pages512, 1);
  const perRowGroup = await rowGroupLoads(pages512, GROUP_LOADS);
  console.log(
    `round ${r}: sync ${sync.total} s CPU (loads ${sync.loads}, publish ${sync.publish}, close ${sync.close}); minimal ${minimal.total} s (loads ${minimal.loads}, publish ${minimal.publish}): ` +
      `${round2(sync.total / minimal.total)}x; ${groupRows} rows committed per load ${perLoad.cpu} s (WAL up to ${perLoad.walMbMax} MB), per row group ${perRowGroup.cpu} s (${perRowGroup.walMbMax} MB): ${round2(perRowGroup.cpu / perLoad.cpu)}x`,
  );
  rounds.push({ sync, minimal, syncOverMinimal: round2(sync.total / minimal.total), rowGroups: { rows: groupRows, perLoad, perRowGroup, ratio: round2(perRowGroup.cpu / perLoad.cpu) } });
}
const file = recordLabelledRun('warehouse-floor', LABEL, {
  contacts: N,
  rounds,
  loadAverage: { before: round2(load), after: round2(loadavg()[0]!) },
  at: new Date().toISOString(),
  node: process.version,
});
console.log(`recorded in ${file}`);
