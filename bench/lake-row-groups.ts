// The lake's Parquet row-group size and dictionary pages: what a bucket's COPY costs the writer in
// time and memory, and what readers pay. Fetches --contacts contacts from the simulator (its
// rows, with custom fields, as a backfill reads them), loads them as the backfill's four ranges
// deliver them (interleaved runs of 13 pages, loads of 5 pages) into a warehouse with the sync
// worker's owner settings (one thread, 128MB), then, per round and in an order rotated each round:
//   - the writer: one 25,000-id bucket of `contacts` COPYed as publish-lake.ts writes it (zstd),
//     once per variant;
//   - the writer's memory: the same COPY in a fresh process per variant (the warehouse reopened,
//     the bucket's rows read once), its resident set sampled every 5 ms. What the COPY adds
//     above the set before it is held by DuckDB's allocator outside its own memory count, and
//     comes on top of everything else a backfill's worker holds while a publish runs;
//   - the readers: the whole table written once per variant as 25,000-id buckets, then four
//     queries (a count, a grouping, a point lookup, a scan of the raw JSON) over each layout,
//     from a separate in-memory DuckDB as an analyst's would be.
// A variant is a row-group size, with `-nodict` for no dictionary pages (DICTIONARY_SIZE_LIMIT 1);
// DuckDB closes a group at the first chunk of rows that takes it to the size or past it, so the
// record gives the most rows a group held.
// Prints medians and writes bench/results/lake-row-groups.json (merged per label). Compare the
// variants within one run: the machine is shared.
//   node --import tsx bench/lake-row-groups.ts [--contacts 100000] [--rounds 6] [--variants 5000,20000] [--label L]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { scanContactPage } from '../src/crm/scan-contact-page.js';
import { startSimulator } from '../src/simulator/index.js';
import { openWarehouseOwner } from '../src/warehouse/index.js';
import { recordLabelledRun } from './runner/record-labelled-run.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const PER_PAGE = 500;
const BUCKET = 25_000;

/** A variant's COPY options: `5000` is ROW_GROUP_SIZE 5000, `5000-nodict` also writes no dictionary pages. */
function copyOptions(variant: string): string {
  const m = /^(\d+)(-nodict)?$/.exec(variant);
  if (!m || !(Number(m[1]) >= 1)) throw new Error(`--variants takes sizes such as 5000 or 5000-nodict, not ${JSON.stringify(variant)}`);
  return `FORMAT parquet, ROW_GROUP_SIZE ${m[1]}, COMPRESSION zstd${m[2] ? ', DICTIONARY_SIZE_LIMIT 1' : ''}`;
}

if (process.argv.includes('--copy-child')) {
  // The memory probe's child: reopen the warehouse, read the bucket once, then COPY it sampled.
  const [dbPath, lakePath, where, variant, out] = ['db', 'lake', 'where', 'variant', 'out'].map((k) => arg(k, ''));
  const owner = await openWarehouseOwner({ dbPath: dbPath!, lakePath: lakePath!, siteTimeZone: 'UTC', memoryLimit: '128MB', threads: 1 });
  await owner.run((w) => w.connection.run(`SELECT sum(hash(c)) FROM (SELECT * FROM contacts WHERE ${where}) c`));
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  await owner.run((w) => w.connection.run(`COPY (SELECT * FROM contacts WHERE ${where}) TO '${out}' (${copyOptions(variant!)})`));
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  await owner.close();
  process.stdout.write(JSON.stringify({ addedMb: (peak - before) / 1048576 }));
  process.exit(0);
}

const N = Number(arg('contacts', '100000'));
const ROUNDS = Number(arg('rounds', '6'));
const SIZES = arg('variants', arg('sizes', '5000,20000')).split(',');
const LABEL = arg('label', `${N} contacts`);
SIZES.forEach(copyOptions);
if (!(N >= 2 * BUCKET) || !(ROUNDS >= 1)) throw new Error('--contacts takes at least 50000, --rounds a positive integer');

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const rotated = <T>(xs: readonly T[], r: number): T[] => xs.map((_, i) => xs[(i + r) % xs.length]!);

const sim = await startSimulator({ contacts: N, seed: 8 });
const auth = `Basic ${Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64')}`;
const pages: { page: number; body: string; rowSpans?: readonly number[] }[] = [];
for (let p = 1; p <= Math.ceil(N / PER_PAGE); p++) {
  const res = await fetch(`${sim.baseUrl}/subscribers?per_page=${PER_PAGE}&page=${p}&sort_by=id&sort_type=ASC&custom_fields=true`, { headers: { authorization: auth } });
  if (!res.ok) throw new Error(`simulator: page ${p} answered ${res.status}`);
  const body = await res.text();
  const spans = scanContactPage(body, { page: p, perPage: PER_PAGE }, 'GET /subscribers').rowSpans;
  pages.push(spans ? { page: p, body, rowSpans: spans } : { page: p, body });
}
await sim.close();

const dir = mkdtempSync(join(tmpdir(), 'crmsync-bench-rg-'));
try {
  const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), siteTimeZone: 'UTC', memoryLimit: '128MB', threads: 1 });
  // Four ranges of 13 pages, each a page at a time in turn, as the scan's ranges deliver them.
  const order: typeof pages = [];
  for (let g = 0; g < pages.length; g += 52) for (let k = 0; k < 13; k++) for (let r = 0; r < 4; r++) if (pages[g + r * 13 + k]) order.push(pages[g + r * 13 + k]!);
  for (let s = 0; s < order.length; s += 5) await owner.run((w) => w.loadContactPages(order.slice(s, s + 5), { loadId: `l${s}`, syncedAt: new Date() }));

  const lastBucket = Math.floor(N / BUCKET) - 1;
  const copy = (where: string, rg: string, path: string) => owner.run((w) => w.connection.run(`COPY (SELECT * FROM contacts WHERE ${where}) TO '${path}' (${copyOptions(rg)})`));
  const lastWhere = `id >= ${lastBucket * BUCKET} AND id < ${(lastBucket + 1) * BUCKET}`;
  const writeMs: Record<string, number[]> = {};
  const fileBytes: Record<string, number> = {};
  const addedMb: Record<string, number[]> = {};
  const groupRows: Record<string, number> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const rg of rotated(SIZES, r)) {
      const path = join(dir, `bucket-${rg}-${r}.parquet`);
      const t = performance.now();
      await copy(lastWhere, rg, path);
      (writeMs[rg] ??= []).push(performance.now() - t);
      fileBytes[rg] = statSync(path).size;
      // Not the size asked: DuckDB closes a row group at the first chunk that takes it there or past.
      groupRows[rg] = await owner.run(async (w) => Number((await w.connection.runAndReadAll(`SELECT max(row_group_num_rows) FROM parquet_metadata('${path}')`)).getRows()[0]![0]));
      rmSync(path);
    }
  }
  for (const rg of SIZES) {
    for (let b = 0; b * BUCKET <= N; b++) {
      mkdirSync(join(dir, `rg${rg}`, `id_bucket=${b}`), { recursive: true });
      await copy(`id >= ${b * BUCKET} AND id < ${(b + 1) * BUCKET}`, rg, join(dir, `rg${rg}`, `id_bucket=${b}`, 'data_0.parquet'));
    }
  }
  await owner.close();
  const self = fileURLToPath(import.meta.url);
  for (let r = 0; r < ROUNDS; r++) {
    for (const rg of rotated(SIZES, r)) {
      const out = join(dir, `child-${rg}-${r}.parquet`);
      const args = ['--import', 'tsx', self, '--copy-child', '--db', join(dir, 'crm.duckdb'), '--lake', join(dir, 'lake'), '--where', lastWhere, '--variant', rg, '--out', out];
      const child = JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' })) as { addedMb: number };
      (addedMb[rg] ??= []).push(child.addedMb);
      rmSync(out);
    }
  }

  const reader = await (await DuckDBInstance.create(':memory:')).connect();
  const queries: Record<string, (files: string) => string> = {
    count: (f) => `SELECT count(*) FROM read_parquet('${f}', hive_partitioning = true) WHERE _deleted_at IS NULL`,
    grouping: (f) => `SELECT status, country, count(*) FROM read_parquet('${f}', hive_partitioning = true) GROUP BY ALL`,
    point: (f) => `SELECT email FROM read_parquet('${f}', hive_partitioning = true) WHERE id = ${Math.floor(N / 2) + 7}`,
    rawScan: (f) => `SELECT count(*) FROM read_parquet('${f}', hive_partitioning = true) WHERE raw::VARCHAR LIKE '%Madrid%'`,
  };
  const readMs: Record<string, Record<string, number[]>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const rg of rotated(SIZES, r)) {
      for (const [name, q] of Object.entries(queries)) {
        const t = performance.now();
        await reader.runAndReadAll(q(join(dir, `rg${rg}`, '*', '*.parquet')));
        ((readMs[name] ??= {})[rg] ??= []).push(performance.now() - t);
      }
    }
  }
  reader.closeSync();

  const base = SIZES[0]!;
  const run = {
    contacts: N,
    rounds: ROUNDS,
    at: new Date().toISOString(),
    loadAverage1m: +loadavg()[0]!.toFixed(2),
    bucketCopy: Object.fromEntries(
      SIZES.map((rg) => [
        rg,
        {
          medianMs: +median(writeMs[rg]!).toFixed(1),
          minMs: +Math.min(...writeMs[rg]!).toFixed(1),
          fileMb: +(fileBytes[rg]! / 1e6).toFixed(2),
          rowsPerGroup: groupRows[rg],
          ratioToFirst: +(median(writeMs[rg]!) / median(writeMs[base]!)).toFixed(2),
          rssAddedMedianMb: +median(addedMb[rg]!).toFixed(1),
          rssAddedMaxMb: +Math.max(...addedMb[rg]!).toFixed(1),
        },
      ]),
    ),
    readers: Object.fromEntries(Object.entries(readMs).map(([name, bySize]) => [name, Object.fromEntries(SIZES.map((rg) => [rg, +median(bySize[rg]!).toFixed(1)]))])),
  };
  console.log(JSON.stringify(run, null, 2));
  console.log(`recorded in ${recordLabelledRun('lake-row-groups', LABEL, run)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
