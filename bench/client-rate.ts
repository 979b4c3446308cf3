/**
 * Rate discovery: 2,000 upserts through the client against a simulator limited to 20 requests/s
 * per credential, without telling the client the limit. Reports the share of 429s and the achieved
 * rate as a share of the limit (push needs < 1% and >= 90%), and the limiter's rate each second.
 *
 *   node --import tsx bench/client-rate.ts [limit=20] [upserts=2000] [concurrency=8]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createCrmClient, createRateLimiter } from '../src/crm/index.js';
import { startSimulator } from '../src/simulator/index.js';

const [limit = 20, n = 2000, concurrency = 8] = process.argv.slice(2).map(Number);
const sim = await startSimulator({ contacts: 10, seed: 9, faults: { rateLimitRps: limit } });
const limiter = createRateLimiter({ maxConcurrency: concurrency });
const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, limiter, maxConcurrency: concurrency });
const t0 = performance.now();
const perSecond: number[] = [];
const timer = setInterval(() => perSecond.push(Math.round(limiter.snapshot().rps * 10) / 10), 1000);
let next = 0;
let failures = 0;
try {
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const k = next++;
        try {
          await client.contacts.upsert({ email: `rate.${k}@example.test`, status: 'subscribed', first_name: `R${k}` });
        } catch {
          failures++;
        }
      }
    }),
  );
} finally {
  clearInterval(timer);
}
const seconds = (performance.now() - t0) / 1000;
const s = client.stats();
const result = {
  benchmark: 'client-rate',
  date: new Date().toISOString(),
  node: process.version,
  limitRps: limit,
  upserts: n,
  concurrency,
  seconds: Math.round(seconds * 10) / 10,
  achievedRps: Math.round((n / seconds) * 10) / 10,
  shareOfLimit: Math.round((n / seconds / limit) * 1000) / 1000,
  status429: s.status429,
  share429: Math.round((s.status429 / n) * 10000) / 10000,
  failures,
  learnedLimitRps: limiter.snapshot().learnedLimitRps,
  limiterRpsEachSecond: perSecond,
  loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
};
console.log(
  `${n} upserts at a ${limit} req/s limit: ${result.seconds} s, ${result.achievedRps} req/s = ${(result.shareOfLimit * 100).toFixed(1)}% of the limit; ${s.status429} 429s (${(result.share429 * 100).toFixed(2)}%), ${failures} failures`,
);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'client-rate.json'), `${JSON.stringify(result, null, 2)}\n`);
await client.close();
await sim.close();
