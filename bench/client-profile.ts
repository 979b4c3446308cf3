/**
 * Profiling aid for bench/client.ts: runs only one side (the bare undici loop or the client) so a
 * `--cpu-prof` profile shows that side's CPU alone, and prints CPU per page. No results are recorded.
 *
 *   node --cpu-prof --import tsx bench/client-profile.ts client|bare|both [contacts=30000] [perPage=100] [concurrency=4] [runs=5]
 *
 * `both` alternates the two like bench/client.ts and also prints the garbage-collection time of each run.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { createCrmClient, createRateLimiter } from '../src/crm/index.js';
import { bareFetch } from './client-bare.js';

const mode = process.argv[2] === 'bare' || process.argv[2] === 'both' ? process.argv[2] : 'client';
const [contacts = 30000, perPage = 100, concurrency = 4, runs = 5] = process.argv.slice(3).map(Number);
const pages = Math.ceil(contacts / perPage);

const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'client-sim-server.ts'), String(contacts), '0', '0'], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const info = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve))) as {
  baseUrl: string;
  credentials: { username: string; password: string };
};
const url = new URL(info.baseUrl);
const auth = `Basic ${Buffer.from(`${info.credentials.username}:${info.credentials.password}`).toString('base64')}`;

function bare(): Promise<number> {
  return bareFetch({ url, auth }, pages, perPage, concurrency);
}

async function viaClient(): Promise<number> {
  const client = createCrmClient({
    baseUrl: info.baseUrl,
    username: info.credentials.username,
    password: info.credentials.password,
    maxConcurrency: concurrency,
    limiter: createRateLimiter({ maxRps: 1_000_000, maxConcurrency: concurrency }),
  });
  try {
    let rows = 0;
    for await (const page of client.paginate((p, pp) => client.contacts.listPage({ page: p, perPage: pp, order: 'asc', orderBy: 'id' }), { perPage, concurrency, order: 'asc' })) {
      rows += page.items.length;
    }
    return rows;
  } finally {
    await client.close();
  }
}

/** CPU time (ns) of this process's threads, main thread apart (Linux schedstat; zeros elsewhere). */
const byName = new Map<string, number>();
function threadCpu(): { main: number; others: number } {
  byName.clear();
  const out = { main: 0, others: 0 };
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      if (tid === String(process.pid)) out.main += ns;
      else {
        out.others += ns;
        if (process.env.THREADS) {
          const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
          byName.set(name, (byName.get(name) ?? 0) + ns);
        }
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

try {
  const fns = mode === 'both' ? [bare, viaClient] : mode === 'bare' ? [bare] : [viaClient];
  for (const fn of fns) await fn(); // warm-up
  for (let r = 0; r < runs; r++) {
    for (const fn of r % 2 === 0 ? fns : [...fns].reverse()) {
      const gc0 = gcMs;
      const th = threadCpu();
      const c = process.cpuUsage();
      const t = performance.now();
      const rows = await fn();
      const used = process.cpuUsage(c);
      const before = new Map(byName);
      const th1 = threadCpu();
      if (process.env.THREADS) console.log([...byName].map(([k, v]) => `${k} ${Math.round((v - (before.get(k) ?? 0)) / 1000 / pages)}`).join(', '));
      const s = (performance.now() - t) / 1000;
      await new Promise((resolve) => setImmediate(resolve)); // let the run's gc entries arrive
      console.log(
        `${fn === bare ? 'bare' : 'client'}: ${rows} rows, ${Math.round(pages / s)} pages/s, CPU ${Math.round((used.user + used.system) / pages)} us/page, GC ${Math.round(((gcMs - gc0) * 1000) / pages)} us/page, main thread ${Math.round((th1.main - th.main) / 1000 / pages)} + other threads ${Math.round((th1.others - th.others) / 1000 / pages)} us/page`,
      );
    }
  }
} finally {
  child.stdin.end();
}
