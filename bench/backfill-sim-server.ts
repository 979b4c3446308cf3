/**
 * Child process for bench/backfill.ts: the simulator on its own event loop (as a remote CRM
 * would be); prints its base URL and credentials as one JSON line; exits when stdin closes.
 * Arguments: contacts, then `real` (the captured deployment's latency by page size) or nothing.
 */
import { REAL_DEPLOYMENT_LATENCY, startSimulator } from '../src/simulator/index.js';

const contacts = Number(process.argv[2] ?? 100_000);
const real = process.argv[3] === 'real';
const sim = await startSimulator({ contacts, seed: 8, ...(real ? { faults: { latencyMs: { byPerPage: REAL_DEPLOYMENT_LATENCY } } } : {}) });
process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, credentials: sim.credentials })}\n`);
// Every 100 ms: bench/backfill.ts times the run's tail from the last request it sees counted.
setInterval(() => {
  process.stderr.write(`${JSON.stringify({ stats: sim.stats() })}\n`);
}, 100).unref();
process.stdin.resume();
process.stdin.on('end', () => {
  process.stderr.write(`${JSON.stringify({ stats: sim.stats() })}\n`);
  sim.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err); // a child process: its parent shows this stderr
      process.exit(1);
    },
  );
});
