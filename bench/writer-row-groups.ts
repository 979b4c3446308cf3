/**
 * The warehouse writer's row group size against its resident memory: N contacts (default
 * 400,000) loaded in 5,000-row loads (as the sync's contact sink does), in write scopes of
 * 200,000 rows (each ends with a checkpoint) under the sync's 256MB DuckDB limit. Each size runs
 * in a process of its own, so its peak (the kernel's high-water mark) is its alone; figures are
 * ratios to DuckDB's default of 122,880 rows, measured in the same run.
 *
 *   node --import tsx bench/writer-row-groups.ts [contacts] [sizes...]
 *
 * Prints the figures and writes bench/results/writer-row-groups.json.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withWarehouse } from '../src/warehouse/index.js';
import { WRITER_ROW_GROUP_SIZE } from '../src/warehouse/open-warehouse.js';
import { runChildJson } from './runner/child-run.js';
import { processMemoryMb } from './runner/process-memory.js';
import { benchContact } from './warehouse-contacts.js';

const LOAD_ROWS = 5_000;
const SCOPE_ROWS = 200_000;
const MEMORY_LIMIT = '256MB';
const DEFAULT_SIZE = 122_880;

async function child(contacts: number, rowGroupSize: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-rowgroups-'));
  try {
    const started = performance.now();
    let next = 1;
    while (next <= contacts) {
      await withWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), write: true, rowGroupSize }, async (w) => {
        await w.connection.run(`SET memory_limit = '${MEMORY_LIMIT}'`);
        const stop = Math.min(contacts + 1, next + SCOPE_ROWS);
        while (next < stop) {
          const batch = [];
          for (let i = 0; i < LOAD_ROWS && next < stop; i++) batch.push(benchContact(next++));
          await w.loadContacts(batch, { loadId: 'bench', syncedAt: new Date() });
        }
      });
    }
    const seconds = (performance.now() - started) / 1000;
    const peakRssMb = processMemoryMb().peak;
    process.stdout.write(`${JSON.stringify({ rowGroupSize, seconds: +seconds.toFixed(2), peakRssMb })}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [n, ...rest] = process.argv.slice(2).map(Number);
  const contacts = n && n > 0 ? n : 400_000;
  const sizes = rest.length > 0 ? rest : [DEFAULT_SIZE, WRITER_ROW_GROUP_SIZE, 30_720];
  if (!sizes.includes(DEFAULT_SIZE)) sizes.unshift(DEFAULT_SIZE);
  const runs: { rowGroupSize: number; seconds: number; peakRssMb: number }[] = [];
  for (const size of sizes) {
    const run = runChildJson<(typeof runs)[number]>(import.meta.url, [String(contacts), String(size)], `row group size ${size}`);
    runs.push(run);
    process.stdout.write(`row groups of ${String(size).padStart(7)}: ${run.seconds.toFixed(2)} s, peak RSS ${run.peakRssMb} MB\n`);
  }
  const base = runs.find((r) => r.rowGroupSize === DEFAULT_SIZE)!;
  const figures = {
    contacts,
    loadRows: LOAD_ROWS,
    scopeRows: SCOPE_ROWS,
    memoryLimit: MEMORY_LIMIT,
    writerDefault: WRITER_ROW_GROUP_SIZE,
    runs: runs.map((r) => ({ ...r, peakRatioToDuckDbDefault: +(r.peakRssMb / base.peakRssMb).toFixed(3), timeRatioToDuckDbDefault: +(r.seconds / base.seconds).toFixed(3) })),
    at: new Date().toISOString(),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  await writeFile('bench/results/writer-row-groups.json', `${JSON.stringify(figures, null, 2)}\n`);
}

if (process.argv[2] === '--child') await child(Number(process.argv[3]), Number(process.argv[4]));
else await main();
