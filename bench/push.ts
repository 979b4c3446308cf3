/**
 * Push throughput against a rate-limited CRM: achieved upserts/s versus the allowed rate, and the
 * share of requests answered 429, at allowed rates of 10, 50 and 200 requests/s. Each rate runs
 * on a fresh simulator (in a child process, like a remote CRM), with the client discovering the
 * limit (no CRM_MAX_RPS), twice: the pusher on its real path (plan, time-bounded batches read
 * from the plan table, ledger writes in a DuckDB file), and as a baseline a bare loop sending
 * the same upserts through the same client with nothing else; push/bare isolates the pusher's
 * own cost from the limiter's.
 *
 *   node --import tsx bench/push.ts [seconds per run=30] [rates=10,50,200]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';
import { createCrmClient, createRateLimiter } from '../src/crm/index.js';
import { retryOutsideTemporal } from '../src/crm/retry-outside-temporal.js';
import { queryOver } from '../src/warehouse/sql-run.js';
import { planPush } from '../src/push/plan-push.js';
import { pushCrmFromClient } from '../src/push/push-crm-from-client.js';
import { PushLedger } from '../src/warehouse/push-ledger-store.js';
import { PushPlanStore } from '../src/warehouse/push-plan-store.js';
import { DEFAULT_PUSH_CONCURRENCY, sendBatch } from '../src/push/send-batch.js';

const seconds = Number(process.argv[2] ?? 30);
const rates = (process.argv[3] ?? '10,50,200').split(',').map(Number);
// As pushWorkflow runs them: at most 2,000 rows, and no row started after 10 s.
const BATCH = 2000;
const BATCH_MS = 10_000;

interface RunFigures {
  rows: number;
  seconds: number;
  achievedRps: number;
  ratioToLimit: number;
  requests: number;
  status429: number;
  ratio429: number;
  /** Rows/s over the second half of the rows, once the limiter has found the limit. */
  steadyRps: number;
}

async function withSimulator<T>(rateLimitRps: number, fn: (sim: { baseUrl: string; credentials: { username: string; password: string } }) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'push-sim-server.ts'), String(rateLimitRps)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
    });
    return await fn(JSON.parse(line) as { baseUrl: string; credentials: { username: string; password: string } });
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin?.end();
    await exited;
  }
}

async function run(limit: number, mode: 'push' | 'bare'): Promise<RunFigures> {
  const rows = Math.round(limit * seconds);
  return await withSimulator(limit, async (sim) => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-push-bench-'));
    const instance = await DuckDBInstance.create(join(dir, 'crm.duckdb'));
    const connection = await instance.connect();
    const limiter = createRateLimiter({ maxConcurrency: 8 });
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, limiter });
    try {
      const db = queryOver(connection);
      for (const f of ['sql/030_push_ledger.sql', 'sql/031_push_plan.sql']) await connection.run(await readFile(f, 'utf8'));
      await db.query(
        `CREATE TABLE bench_source AS SELECT 'bench' || i || '@example.test' AS email, 'subscribed' AS status, 'First' || i AS first_name,
           ['Red', 'Green', 'Blue'][1 + i % 3] AS cf_favorite_color FROM range(${rows}) t(i)`,
      );
      const crm = pushCrmFromClient(client);
      const plan = await planPush({ crm, db }, { from: 'bench_source', runId: 'bench', createMissing: false, dryRun: false });
      const before = client.stats();
      const started = performance.now();
      let succeeded = 0;
      const doneAt: number[] = [];
      if (mode === 'bare') {
        const rows = await new PushPlanStore(db).load('bench', 0, plan.toSend);
        let next = 0;
        await Promise.all(
          Array.from({ length: DEFAULT_PUSH_CONCURRENCY }, async () => {
            for (let row = rows[next++]; row; row = rows[next++]) {
              // A 429 is retried after its Retry-After, as Temporal retries the pusher's activity.
              await retryOutsideTemporal(() => crm.upsertContact(row.body));
              succeeded++;
              doneAt.push(performance.now());
            }
          }),
        );
      }
      for (let from = 0; mode === 'push' && from < plan.toSend;) {
        const batch = await new PushPlanStore(db).load('bench', from, from + BATCH);
        // A batch a 429 interrupted is run again from the ledger, as Temporal retries pushBatch.
        // The rows an interrupted attempt finished are reported again (from the ledger) at the
        // start of the next: their first times are kept, not the repeats.
        let earlier = 0;
        const r = await retryOutsideTemporal(
          () => {
            let reported = 0;
            return sendBatch(
              { crm, ledger: new PushLedger(db) },
              {
                source: plan.source,
                runId: 'bench',
                rows: batch,
                deadline: Date.now() + BATCH_MS,
                onProgress: () => {
                  if (++reported > earlier) doneAt.push(performance.now());
                },
              },
            ).catch((err: unknown) => {
              earlier = Math.max(earlier, reported);
              throw err;
            });
          },
          { attempts: 50 },
        );
        succeeded += r.succeeded;
        from = r.nextSeq;
      }
      const elapsed = (performance.now() - started) / 1000;
      const after = client.stats();
      if (succeeded !== rows) throw new Error(`only ${succeeded} of ${rows} rows landed`);
      const requests = after.requests - before.requests;
      const status429 = after.status429 - before.status429;
      const achievedRps = succeeded / elapsed;
      const half = Math.floor(doneAt.length / 2);
      const steadyRps = (doneAt.length - 1 - half) / ((doneAt[doneAt.length - 1]! - doneAt[half]!) / 1000);
      return { rows, seconds: elapsed, achievedRps, ratioToLimit: achievedRps / limit, requests, status429, ratio429: status429 / requests, steadyRps };
    } finally {
      await client.close();
      connection.closeSync();
      instance.closeSync();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

const results: Record<string, { push: RunFigures; bare: RunFigures; pushVsBare: number }> = {};
for (const limit of rates) {
  const bare = await run(limit, 'bare');
  const push = await run(limit, 'push');
  results[String(limit)] = { push, bare, pushVsBare: push.achievedRps / bare.achievedRps };
  const fmt = (r: RunFigures) =>
    `${r.achievedRps.toFixed(2)} req/s (${(100 * r.ratioToLimit).toFixed(1)}% of limit; second half ${r.steadyRps.toFixed(1)} req/s), ` +
    `429s ${r.status429}/${r.requests} (${(100 * r.ratio429).toFixed(2)}%)`;
  console.log(`limit ${limit} req/s, ${push.rows} rows: push ${fmt(push)}; bare client loop ${fmt(bare)}; push/bare ${(push.achievedRps / bare.achievedRps).toFixed(2)}`);
}

mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
const out = {
  bench: 'push',
  date: new Date().toISOString(),
  node: process.version,
  secondsPerRun: seconds,
  batchSize: BATCH,
  batchMs: BATCH_MS,
  concurrency: DEFAULT_PUSH_CONCURRENCY,
  note: 'achievedRps = rows landed / wall time of the send phase; ratio429 = 429 responses / HTTP requests (client stats)',
  results,
};
writeFileSync(join(import.meta.dirname, 'results', 'push.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log('wrote bench/results/push.json');
