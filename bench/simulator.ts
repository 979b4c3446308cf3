/**
 * Simulator throughput at 1,000,000 contacts: contact pages per second and rows per second at
 * per_page 100 and 1000 with 4 concurrent clients, and the simulator's memory. The simulator runs
 * in its own process (started through the CLI, as `crmsync simulator` would be), so its RSS is
 * its own. Figures are also given as ratios to a baseline of tiny requests (per_page=1) measured
 * in the same run, because the machine is shared and absolute numbers are noisy.
 *
 *   node --import tsx bench/simulator.ts [--contacts N]
 */
import { spawn } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { processMemoryMb } from './runner/process-memory.js';

const contacts = Number(process.argv[process.argv.indexOf('--contacts') + 1] || 1_000_000) || 1_000_000;
const username = 'bench-admin';
const password = 'bench-password-not-secret';
const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const CONCURRENCY = 4;

async function run(baseUrl: string, paths: string[]): Promise<{ seconds: number; bytes: number; latencies: number[] }> {
  let next = 0;
  let bytes = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < paths.length) {
        const path = paths[next++] as string;
        const t = performance.now();
        const res = await fetch(baseUrl + path, { headers: { authorization: auth, accept: 'application/json' } });
        const text = await res.text();
        if (res.status !== 200 || !text.endsWith('}')) throw new Error(`${path}: HTTP ${res.status}`);
        bytes += text.length;
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, bytes, latencies };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number) * 10) / 10;
};

/** Pages spread over the whole id range (deterministic), so every part of the store is read. */
function pagePaths(perPage: number, count: number): string[] {
  const lastPage = Math.ceil(contacts / perPage);
  return Array.from({ length: count }, (_, i) => `/subscribers?per_page=${perPage}&page=${1 + ((i * 7919) % lastPage)}`);
}

const t0 = performance.now();
const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', 'simulator', '--contacts', String(contacts), '--port', '0', '--seed', '1'], {
  env: { ...process.env, CRM_USERNAME: username, CRM_PASSWORD: password, CRMSYNC_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  const startupMs = Math.round(performance.now() - t0);
  if (!baseUrl.endsWith('/v2')) throw new Error(`unexpected base URL ${baseUrl}`);
  const pid = child.pid as number;
  const memStart = processMemoryMb(pid);
  await run(baseUrl, pagePaths(100, 20)); // warm-up
  const tCounts = performance.now();
  await run(baseUrl, ['/tags']);
  const firstTagsMs = Math.round(performance.now() - tCounts);
  const baseline = await run(baseUrl, pagePaths(1, 400));
  const baselineRps = 400 / baseline.seconds;
  const results: Record<string, unknown> = {};
  for (const [perPage, pages] of [
    [100, 300],
    [1000, 60],
  ] as const) {
    const r = await run(baseUrl, pagePaths(perPage, pages));
    const pagesPerSec = pages / r.seconds;
    results[`perPage${perPage}`] = {
      pages,
      pagesPerSec: Math.round(pagesPerSec * 10) / 10,
      rowsPerSec: Math.round(pagesPerSec * perPage),
      mbPerSec: Math.round((r.bytes / 1e6 / r.seconds) * 10) / 10,
      bytesPerRow: Math.round(r.bytes / (pages * perPage)),
      p50Ms: pct(r.latencies, 50),
      p95Ms: pct(r.latencies, 95),
      pagesPerSecOverBaselineRps: Math.round((pagesPerSec / baselineRps) * 1000) / 1000,
    };
  }
  const memEnd = processMemoryMb(pid);
  const out = {
    benchmark: 'simulator',
    date: new Date().toISOString(),
    contacts,
    concurrency: CONCURRENCY,
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    startupMs,
    firstTagsWithCountsMs: firstTagsMs,
    rssMb: { afterStart: memStart.rss, afterRun: memEnd.rss, peak: memEnd.peak },
    baseline: { what: 'GET /subscribers?per_page=1', requestsPerSec: Math.round(baselineRps), p50Ms: pct(baseline.latencies, 50) },
    ...results,
  };
  console.log(JSON.stringify(out, null, 2));
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/simulator.json', `${JSON.stringify(out, null, 2)}\n`);
} finally {
  child.kill('SIGTERM');
}
