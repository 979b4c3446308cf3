/**
 * Client throughput: pages/s reading contacts through the CRM client (rate limiter, retries,
 * zod validation, normalization, drift checks) versus a bare undici loop fetching the same pages at
 * the same concurrency (request, read, JSON.parse). Rounds alternate so machine noise hits both;
 * the figure is the median of the per-round client/bare ratios. The simulator runs in a child process, like a remote CRM.
 *
 * Two scenarios: the simulator answering at once (the client's CPU cost decides; on a loaded
 * machine this is the worst case), and answering with the latency measured on the real deployment
 * for per_page=100 pages (47-71 ms, fixtures README), where a sync actually spends its time.
 *
 *   node --import tsx bench/client.ts [contacts=6000] [perPage=100] [concurrency=4] [rounds=9] [scenario index, default all]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createCrmClient, createRateLimiter } from '../src/crm/index.js';
import { bareFetch } from './client-bare.js';
import { median } from './runner/median.js';

const [contacts = 6000, perPage = 100, concurrency = 4, rounds = 9, only = -1] = process.argv.slice(2).map(Number);
const pages = Math.ceil(contacts / perPage);

const SCENARIOS = [
  { name: 'local, no added latency (CPU-bound)', latency: [0, 0] },
  { name: 'real-deployment latency (47-71 ms per page)', latency: [47, 71] },
] as const;

let baseUrl = '';
let url = new URL('http://127.0.0.1');
let auth = '';
let credentials = { username: '', password: '' };

async function startServer(latency: readonly [number, number]) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'client-sim-server.ts'), String(contacts), String(latency[0]), String(latency[1])], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  const info = JSON.parse(first) as { baseUrl: string; credentials: { username: string; password: string } };
  baseUrl = info.baseUrl;
  credentials = info.credentials;
  url = new URL(baseUrl);
  auth = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  return child;
}

function bare(): Promise<number> {
  return bareFetch({ url, auth }, pages, perPage, concurrency);
}

async function viaClient(): Promise<number> {
  const client = createCrmClient({
    baseUrl,
    username: credentials.username,
    password: credentials.password,
    maxConcurrency: concurrency,
    // The budget is not what is measured here: a ceiling far above what the server can serve.
    limiter: createRateLimiter({ maxRps: 1_000_000, maxConcurrency: concurrency }),
  });
  try {
    let rows = 0;
    for await (const page of client.paginate((p, pp) => client.contacts.listPage({ page: p, perPage: pp, order: 'asc', orderBy: 'id' }), {
      perPage,
      concurrency,
      order: 'asc',
    })) {
      rows += page.items.length;
    }
    return rows;
  } finally {
    await client.close();
  }
}

/** Wall time, and this process's CPU time (the simulator runs in its own process). */
async function timed(fn: () => Promise<number>): Promise<{ seconds: number; rows: number; cpuUs: number }> {
  const c = process.cpuUsage();
  const t = performance.now();
  const rows = await fn();
  const used = process.cpuUsage(c);
  return { seconds: (performance.now() - t) / 1000, rows, cpuUs: used.user + used.system };
}

async function scenario(name: string, latency: readonly [number, number]) {
  const child = await startServer(latency);
  try {
    await timed(bare); // warm-up: JIT, connections, simulator caches
    await timed(viaClient);
    const bareRates: number[] = [];
    const clientRates: number[] = [];
    const pairRatios: number[] = [];
    const cpu = { bare: [] as number[], client: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [bare, viaClient] : [viaClient, bare];
      for (const fn of order) {
        const { seconds, rows, cpuUs } = await timed(fn);
        if (rows !== contacts) throw new Error(`${fn.name} read ${rows} rows, expected ${contacts}`);
        (fn === bare ? bareRates : clientRates).push(pages / seconds);
        (fn === bare ? cpu.bare : cpu.client).push(cpuUs / pages);
      }
      // Back-to-back pairs see nearly the same machine load: their ratio is steadier than a ratio of medians.
      pairRatios.push(clientRates.at(-1)! / bareRates.at(-1)!);
    }
    const r = {
      name,
      latencyMs: latency,
      barePagesPerSec: Math.round(median(bareRates) * 10) / 10,
      clientPagesPerSec: Math.round(median(clientRates) * 10) / 10,
      ratio: Math.round(median(pairRatios) * 1000) / 1000,
      ratioOfMedians: Math.round((median(clientRates) / median(bareRates)) * 1000) / 1000,
      // CPU of this process per page: what validation, normalization and the limiter cost, whatever the load.
      cpuUsPerPage: { bare: Math.round(median(cpu.bare)), client: Math.round(median(cpu.client)) },
      samples: { bare: bareRates.map((x) => Math.round(x)), client: clientRates.map((x) => Math.round(x)), pairRatios: pairRatios.map((x) => Math.round(x * 100) / 100) },
    };
    console.log(
      `${name}: bare undici ${r.barePagesPerSec} pages/s, client ${r.clientPagesPerSec} pages/s, ratio ${r.ratio} (paired median; of medians ${r.ratioOfMedians}); CPU per page ${r.cpuUsPerPage.bare} vs ${r.cpuUsPerPage.client} us`,
    );
    return r;
  } finally {
    child.stdin!.end();
  }
}

const results = [];
for (const [i, sc] of SCENARIOS.entries()) if (only < 0 || only === i) results.push(await scenario(sc.name, sc.latency));
const result = {
  benchmark: 'client',
  date: new Date().toISOString(),
  node: process.version,
  contacts,
  perPage,
  pages,
  concurrency,
  rounds,
  target: 0.9,
  loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
  scenarios: results,
};
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'client.json'), `${JSON.stringify(result, null, 2)}\n`);
