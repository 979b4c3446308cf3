// Child process for dev-server.test.ts: starts a dev server, prints its address, then idles
// until killed (the test SIGKILLs it to prove the server does not outlive it).
import { loadConfig } from '../../src/config.js';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { locateTemporalCliFromConfig } from '../../src/temporal/locate-cli.js';

const server = await startDevServer({ cliPath: locateTemporalCliFromConfig(loadConfig()).path });
process.stdout.write(`${JSON.stringify({ address: server.address })}\n`);
setInterval(() => undefined, 60_000);
