/**
 * What DuckDB alone takes to write contacts through the warehouse writer, with no JS objects:
 * N contact rows (default 1,000,000) generated in SQL, with a raw JSON record of about 820 bytes
 * as the sync stores one, appended in 5,000-row transactions (the sync's load size) in write
 * scopes of 200,000 rows (each ends with a checkpoint). Each setting runs in a process of its own:
 * its peak (the kernel's high-water mark) less its resident set once the warehouse is open is
 * DuckDB's working memory. That is the part of the sync worker's peak that no setting of ours
 * moves below, and it is the floor docs/sync.md compares the 400 MB target with.
 *
 *   node --import tsx bench/duckdb-writer-memory.ts [contacts]
 *
 * Prints the figures and writes bench/results/duckdb-writer-memory.json.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withWarehouse } from '../src/warehouse/index.js';
import { runChildJson } from './runner/child-run.js';
import { processMemoryMb } from './runner/process-memory.js';

const LOAD_ROWS = 5_000;
const SCOPE_ROWS = 200_000;

interface Setting {
  threads: number | 'default';
  memoryLimit: string;
}

const SETTINGS: readonly Setting[] = [
  { threads: 'default', memoryLimit: '256MB' },
  { threads: 1, memoryLimit: '256MB' },
  { threads: 1, memoryLimit: '128MB' },
  { threads: 1, memoryLimit: '64MB' },
];

// A contact row as the load writes it; raw is shaped like encodeContactRaw's output, 800-840 bytes.
const ROWS_SQL = (from: number, to: number): string => `
  INSERT INTO contacts (id, email, first_name, last_name, full_name, status, contact_type, city, country,
    tag_ids, list_ids, custom_values, created_at, updated_at, raw, _fingerprint, _load_id, _synced_at)
  SELECT i, 'user.' || i || '@example.com', 'Fay', 'Müller', 'Fay Müller', 'subscribed', 'lead', 'Berlin', 'DE',
    [i % 7, i % 11], [i % 3], '{"plan":"pro"}', TIMESTAMPTZ '2020-01-01' + to_seconds(i), TIMESTAMPTZ '2020-01-01' + to_seconds(i),
    ('{"id":"' || i || '","hash":"' || md5(i::VARCHAR) || '","email":"user.' || i || '@example.com","notes":"'
      || repeat(md5((i * 7)::VARCHAR), 21) || '"}')::JSON,
    md5(i::VARCHAR), 'bench', now()
  FROM range(${from}, ${to}) t(i)`;

async function child(contacts: number, setting: Setting): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-duckmem-'));
  try {
    let baselineMb = 0;
    const started = performance.now();
    let next = 1;
    while (next <= contacts) {
      await withWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), write: true }, async (w) => {
        await w.connection.run(`SET memory_limit = '${setting.memoryLimit}'`);
        if (setting.threads !== 'default') await w.connection.run(`SET threads = ${setting.threads}`);
        if (baselineMb === 0) baselineMb = processMemoryMb().rss;
        const stop = Math.min(contacts + 1, next + SCOPE_ROWS);
        for (; next < stop; next += LOAD_ROWS) {
          await w.connection.run(`BEGIN; ${ROWS_SQL(next, Math.min(stop, next + LOAD_ROWS))}; COMMIT`);
        }
      });
    }
    const seconds = (performance.now() - started) / 1000;
    const peakMb = processMemoryMb().peak;
    process.stdout.write(`${JSON.stringify({ ...setting, seconds: +seconds.toFixed(2), baselineMb, peakMb, duckdbWorkingMb: peakMb - baselineMb })}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2]);
  const contacts = n > 0 ? n : 1_000_000;
  const runs: (Setting & { seconds: number; baselineMb: number; peakMb: number; duckdbWorkingMb: number })[] = [];
  for (const setting of SETTINGS) {
    const run = runChildJson<(typeof runs)[number]>(import.meta.url, [String(contacts), JSON.stringify(setting)], JSON.stringify(setting));
    runs.push(run);
    process.stdout.write(
      `threads ${String(setting.threads).padEnd(7)} limit ${setting.memoryLimit.padEnd(5)}: ${run.seconds.toFixed(2)} s, ` +
        `resident ${run.baselineMb} MB open, peak ${run.peakMb} MB: DuckDB's working memory ${run.duckdbWorkingMb} MB\n`,
    );
  }
  const base = runs[0]!;
  const figures = {
    contacts,
    loadRows: LOAD_ROWS,
    scopeRows: SCOPE_ROWS,
    measured: "each setting in its own process: peak RSS (VmHWM) less RSS once the warehouse is open; ratios to DuckDB's defaults (threads per core) at 256MB",
    runs: runs.map((r) => ({
      ...r,
      workingRatioToDefault: +(r.duckdbWorkingMb / base.duckdbWorkingMb).toFixed(3),
      timeRatioToDefault: +(r.seconds / base.seconds).toFixed(3),
    })),
    at: new Date().toISOString(),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  await writeFile('bench/results/duckdb-writer-memory.json', `${JSON.stringify(figures, null, 2)}\n`);
}

if (process.argv[2] === '--child') await child(Number(process.argv[3]), JSON.parse(process.argv[4]!) as Setting);
else await main();
