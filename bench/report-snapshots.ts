// The write of one report run's snapshots on the warehouse's single writer: all in one
// transaction (insertReportSnapshots, what snapshotReports does now) against a transaction per
// snapshot (insertReportSnapshot in a loop, as it did before), alternating in this process on
// the simulator's reports (the set a sync takes), each in a fresh temp warehouse file.
//   node --import tsx bench/report-snapshots.ts [--rounds N] [--label after]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReportActivities } from '../activities/sync-reports.js';
import { createCrmClient } from '../src/crm/index.js';
import type { ReportSnapshot } from '../src/crm/types.js';
import { silentLogger } from '../src/logger.js';
import { startSimulator } from '../src/simulator/index.js';
import type { WarehouseSession, WriteJobs } from '../src/sync/warehouse-port.js';
import { openWarehouse } from '../src/warehouse/index.js';
import { median } from './runner/median.js';

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};
const rounds = Number(arg('rounds', '7'));
const label = arg('label', 'current');

// The snapshots of one report run, captured from the activity as it hands them to the writer.
const sim = await startSimulator({ contacts: 2_000, seed: 16 });
const snapshots: ReportSnapshot[] = [];
try {
  const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
  const state = new Map<string, unknown>();
  const capture = {
    getSyncState: async (key: string) => state.get(key),
    setSyncState: async (key: string, value: unknown) => void state.set(key, value),
    insertReportSnapshots: async (s: readonly ReportSnapshot[]) => snapshots.push(...s),
  } as unknown as WarehouseSession;
  const writes: WriteJobs = { run: (job) => job(capture) };
  await createReportActivities({ client, writes, logger: silentLogger }).snapshotReports({ loadId: 'bench:reports' });
  await client.close();
} finally {
  await sim.close();
}

async function timeWrite(oneTransaction: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-reports-'));
  try {
    const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    try {
      await w.migrate();
      const ctx = { loadId: 'bench:reports', syncedAt: new Date() };
      const t = performance.now();
      if (oneTransaction) await w.insertReportSnapshots(snapshots, ctx);
      else for (const s of snapshots) await w.insertReportSnapshot(s, ctx);
      return performance.now() - t;
    } finally {
      await w.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const loadAtStart = loadavg().map((x) => Number(x.toFixed(2)));
const times = { perSnapshot: [] as number[], oneTransaction: [] as number[] };
for (let r = 0; r < rounds; r++) {
  times.perSnapshot.push(await timeWrite(false));
  times.oneTransaction.push(await timeWrite(true));
}
const loadAtEnd = loadavg().map((x) => Number(x.toFixed(2)));
const figures = {
  snapshots: snapshots.length,
  perSnapshotMs: { median: Math.round(median(times.perSnapshot)), runs: times.perSnapshot.map(Math.round) },
  oneTransactionMs: { median: Math.round(median(times.oneTransaction)), runs: times.oneTransaction.map(Math.round) },
  ratio: Number((median(times.oneTransaction) / median(times.perSnapshot)).toFixed(2)),
};
console.log(
  `${snapshots.length} snapshots: a transaction each ${figures.perSnapshotMs.median} ms, one transaction ${figures.oneTransactionMs.median} ms (ratio ${figures.ratio}), medians of ${rounds}`,
);
console.log(`load average (1, 5, 15 min): ${loadAtStart.join(', ')} at start, ${loadAtEnd.join(', ')} at end (2 cores)`);

const resultFile = join(here, 'results', 'report-snapshots.json');
let recorded: Record<string, unknown> = {};
try {
  recorded = JSON.parse(readFileSync(resultFile, 'utf8')) as Record<string, unknown>;
} catch {
  recorded = {};
}
recorded[label] = { at: new Date().toISOString(), rounds, loadAverage: { start: loadAtStart, end: loadAtEnd }, figures };
writeFileSync(resultFile, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(`recorded as "${label}" in ${resultFile}`);
