/**
 * Child process for bench/client.ts: serves the simulator on its own event loop (as a remote CRM
 * would be) and prints its base URL and credentials as one JSON line. Exits when stdin closes.
 */
import { startSimulator } from '../src/simulator/index.js';

const contacts = Number(process.argv[2] ?? 5000);
const latencyMin = Number(process.argv[3] ?? 0);
const latencyMax = Number(process.argv[4] ?? latencyMin);
const sim = await startSimulator({ contacts, seed: 5, ...(latencyMax > 0 ? { faults: { latencyMs: { min: latencyMin, max: latencyMax } } } : {}) });
process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, credentials: sim.credentials })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  sim.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err); // a child process: its parent shows this stderr
      process.exit(1);
    },
  );
});
