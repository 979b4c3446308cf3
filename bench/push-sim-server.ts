/**
 * Child process for bench/push.ts: a simulator limited to `rateLimitRps` requests/s per
 * credential, on its own event loop like a remote CRM. Prints base URL and credentials as one
 * JSON line; exits when stdin closes.
 */
import { startSimulator } from '../src/simulator/index.js';

const rateLimitRps = Number(process.argv[2] ?? 20);
const sim = await startSimulator({ contacts: 10, seed: 8, faults: { rateLimitRps } });
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
