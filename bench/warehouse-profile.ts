// Times each SQL statement of loadContacts (statements over 50 ms; wall and process CPU time),
// to find where a load goes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWarehouse } from '../src/warehouse/index.js';
import { encodeContactRow } from '../src/warehouse/contact-rows.js';
import { timeStatements } from './time-statements.js';
import { benchContact } from './warehouse-contacts.js';

const N = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'crmsync-prof-'));
try {
  const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  await w.migrate();
  timeStatements(w, (sql, ms, cpuMs) => {
    if (ms > 50) console.log(`${Math.round(ms)} ms (cpu ${Math.round(cpuMs)} ms)  ${sql.slice(0, 90)}`);
  });
  const cs = Array.from({ length: N }, (_, i) => benchContact(i + 1));
  let t = performance.now();
  const docs = cs.map((x) => JSON.stringify(x));
  console.log(`${Math.round(performance.now() - t)} ms  JSON.stringify x${N} (${docs.length})`);
  t = performance.now();
  const rows = cs.map((x) => encodeContactRow(x));
  console.log(`${Math.round(performance.now() - t)} ms  encodeContactRow x${N} (${rows.length})`);
  for (const round of [0, 1]) {
    t = performance.now();
    const cpu = process.cpuUsage();
    const s = await w.loadContacts(round ? cs.map((x, i) => (i % 100 ? x : benchContact(i + 1, 1))) : cs, { loadId: `p${round}`, syncedAt: new Date() });
    const u = process.cpuUsage(cpu);
    console.log(`${Math.round(performance.now() - t)} ms (cpu ${Math.round((u.user + u.system) / 1000)} ms)  TOTAL loadContacts round ${round}`, s);
  }
  await w.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
