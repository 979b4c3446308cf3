// The simulator in its own process, as a remote CRM is, so that serving requests does not share
// the event loop (and timers) of the client under test. Options come as JSON in argv[2]; prints
// base URL, admin URL and credentials as one JSON line; exits when stdin closes.
import { startSimulator, type SimulatorOptions } from '../../../src/simulator/index.js';

const sim = await startSimulator({ ...(JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions), admin: true });
process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, adminUrl: sim.adminUrl, credentials: sim.credentials })}\n`);
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
