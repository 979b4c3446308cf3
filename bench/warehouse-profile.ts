// Times each SQL statement of loadContacts (statements over 50 ms), to find where a load goes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWarehouse } from '../src/warehouse/index.js';
import { benchContact } from './warehouse-contacts.js';

const N = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'crmsync-prof-'));
try {
  const w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  await w.migrate();
  const c = w.connection as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  for (const m of ['run', 'runAndReadAll', 'createAppender']) {
    const orig = c[m]!.bind(w.connection);
    c[m] = async (...a: unknown[]) => {
      const t = performance.now();
      try {
        return await orig(...a);
      } finally {
        const ms = performance.now() - t;
        if (ms > 50) console.log(`${Math.round(ms)} ms  ${String(a[0]).replace(/\s+/g, ' ').slice(0, 90)}`);
      }
    };
  }
  const cs = Array.from({ length: N }, (_, i) => benchContact(i + 1));
  let t = performance.now();
  const docs = cs.map((x) => JSON.stringify(x));
  console.log(`${Math.round(performance.now() - t)} ms  JSON.stringify x${N} (${docs.length})`);
  for (const round of [0, 1]) {
    t = performance.now();
    const s = await w.loadContacts(round ? cs.map((x, i) => (i % 100 ? x : benchContact(i + 1, 1))) : cs, { loadId: `p${round}`, syncedAt: new Date() });
    console.log(`${Math.round(performance.now() - t)} ms  TOTAL loadContacts round ${round}`, s);
  }
  await w.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
