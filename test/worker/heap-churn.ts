// Child of limit-heap-growth.test.ts: a live set of about 20 MB of objects, each replaced after
// a while (as a backfill's pages are), and the largest heap seen, in MB, on stdout.
import { limitHeapGrowth } from '../../src/worker/limit-heap-growth.js';

limitHeapGrowth(Number(process.argv[2]));
const live: unknown[] = new Array(20_000);
let peak = 0;
for (let i = 0; i < 600_000; i++) {
  live[i % live.length] = { id: i, email: `c${i}@example.com`, note: `${'x'.repeat(600)}${i}`, tags: [{ id: i, title: `t${i}` }] };
  if (i % 2_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
}
process.stdout.write(`${Math.round(peak / 1048576)}\n`);
