// Times each SQL statement of 5,000-row loadContacts calls into a growing table (the sync's
// pattern), summed per statement over the loads, to find where a small load goes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWarehouse } from '../src/warehouse/index.js';
import { timeStatements } from './time-statements.js';
import { benchContact } from './warehouse-contacts.js';

const N = Number(process.argv[2] ?? 100_000);
const BATCH = Number(process.argv[3] ?? 5_000);
// argv[4]: a checkpoint_threshold to try (e.g. 256MB)
const dir = mkdtempSync(join(tmpdir(), 'crmsync-prof-'));
const totals = new Map<string, { ms: number; cpu: number; n: number }>();
try {
  const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  await w.migrate();
  if (process.argv[4]) await w.connection.run(`SET checkpoint_threshold = '${process.argv[4]}'`);
  timeStatements(w, (sql, ms, cpuMs) => {
    const key = sql.replace(/'[^']*'/g, "'?'").slice(0, 80);
    const e = totals.get(key) ?? { ms: 0, cpu: 0, n: 0 };
    e.ms += ms;
    e.cpu += cpuMs;
    e.n++;
    totals.set(key, e);
  });
  const t = performance.now();
  const cpu = process.cpuUsage();
  for (let from = 1; from <= N; from += BATCH) {
    const cs = Array.from({ length: BATCH }, (_, i) => benchContact(from + i));
    await w.loadContacts(cs, { loadId: `p${from}`, syncedAt: new Date() });
  }
  // Counted: the checkpoint every write scope ends with.
  await w.checkpoint();
  const u = process.cpuUsage(cpu);
  console.log(`${Math.round(performance.now() - t)} ms (cpu ${Math.round((u.user + u.system) / 1000)} ms) TOTAL ${N} in ${BATCH}-row loads`);
  for (const [k, e] of [...totals].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14)) {
    console.log(`${Math.round(e.ms)} ms (cpu ${Math.round(e.cpu)} ms) x${e.n}  ${k}`);
  }
  await w.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
