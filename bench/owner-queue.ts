/**
 * Two statements of the owner's serial queue outside the typing of pages, each against the way
 * before, alternated in one process so the machine's load hits both alike:
 * - the scan page log of a load (10 pages of 500 ids) in commits of its own (before) against in
 *   the load's transaction (`loadRecordingScannedPages`; the "load" here is one INSERT, so the
 *   figure is the page log's own cost);
 * - the append-or-merge question over N contacts: `max(id)` (before) against `holdsIdFrom`.
 *
 *   node --import tsx bench/owner-queue.ts [contacts] [rounds]   (default 1000000 3)
 *
 * Prints the figures and writes bench/results/owner-queue.json.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWarehouseOwner } from '../src/warehouse/index.js';
import { holdsIdFrom } from '../src/warehouse/load-contacts.js';
import { loadRecordingScannedPages, recordScannedPages, type ScannedPageRecord } from '../src/warehouse/scan-tables.js';
import { inTransaction, readCount, run } from '../src/warehouse/sql-run.js';

const CONTACTS = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const BATCHES = 50;

const dir = await mkdtemp(join(tmpdir(), 'crmsync-owner-queue-'));
const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), threads: 1, memoryLimit: '128MB' });
const load = loadavg()[0]!;
const rounds: Record<string, number>[] = [];
try {
  await owner.run((w) =>
    run(
      w.connection,
      `INSERT INTO contacts (id, email, _fingerprint, _load_id, _synced_at) SELECT i, 'c' || i || '@example.com', md5(i::VARCHAR), 'bench', now() FROM range(1, ${CONTACTS + 1}) t(i); CHECKPOINT`,
    ),
  );
  await owner.run((w) => run(w.connection, 'CREATE TABLE _bench_load (v INTEGER)'));
  let nextId = CONTACTS + 1;
  let nextPage = 1;
  const batch = (): ScannedPageRecord[] =>
    Array.from({ length: 10 }, () => ({ scanKey: 'bench', page: nextPage++, ids: Array.from({ length: 500 }, () => nextId++), reportedTotal: CONTACTS, at: new Date() }));
  const timed = async (fn: () => Promise<unknown>, n: number): Promise<{ ms: number; cpuMs: number }> => {
    const t = performance.now();
    const c = process.cpuUsage();
    for (let i = 0; i < n; i++) await fn();
    const u = process.cpuUsage(c);
    return { ms: (performance.now() - t) / n, cpuMs: (u.user + u.system) / 1000 / n };
  };
  for (let r = 0; r < ROUNDS; r++) {
    const loadOnly = () => owner.run((w) => inTransaction(w.connection, () => run(w.connection, 'INSERT INTO _bench_load VALUES (1)')));
    const before = await timed(async () => {
      const pages = batch();
      await loadOnly();
      await owner.run((w) => recordScannedPages(w, pages));
    }, BATCHES);
    const after = await timed(async () => {
      const pages = batch();
      await owner.run((w) => loadRecordingScannedPages(w, pages, () => inTransaction(w.connection, () => run(w.connection, 'INSERT INTO _bench_load VALUES (1)'))));
    }, BATCHES);
    const loadAlone = await timed(loadOnly, BATCHES);
    const maxId = await timed(() => owner.run((w) => readCount(w.connection, 'SELECT coalesce(max(id), 0) FROM contacts')), 50);
    const holds = await timed(() => owner.run((w) => holdsIdFrom(w.connection, nextId)), 50);
    rounds.push({
      pageLogOwnCommitsMs: +(before.ms - loadAlone.ms).toFixed(2),
      pageLogInLoadCommitMs: +(after.ms - loadAlone.ms).toFixed(2),
      loadAloneMs: +loadAlone.ms.toFixed(2),
      maxIdMs: +maxId.ms.toFixed(2),
      holdsIdFromMs: +holds.ms.toFixed(2),
    });
    process.stdout.write(`${JSON.stringify(rounds.at(-1))}\n`);
  }
} finally {
  await owner.close();
  await rm(dir, { recursive: true, force: true });
}
const figures = {
  contacts: CONTACTS,
  batchesPerRound: BATCHES,
  pagesPerBatch: 10,
  idsPerPage: 500,
  rounds,
  loadAverage1m: { before: +load.toFixed(2), after: +loadavg()[0]!.toFixed(2) },
  note: "page log figures: a job's time less that of a job with the stand-in load (one INSERT in inTransaction) alone",
  at: new Date().toISOString(),
};
await writeFile('bench/results/owner-queue.json', `${JSON.stringify(figures, null, 2)}\n`);
