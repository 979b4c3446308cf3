import { createCrmClient, createRateLimiter, type CrmClient, type CrmClientOptions } from '../../../src/crm/index.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../../src/simulator/index.js';

/** A simulator on port 0 and a client for it with its own (fast, fixed) limiter; closed together. */
export async function withSimClient<T>(simOpts: SimulatorOptions, fn: (sim: RunningSimulator, client: CrmClient) => Promise<T>, clientOpts: Partial<CrmClientOptions> = {}): Promise<T> {
  const sim = await startSimulator(simOpts);
  const client = clientFor(sim, clientOpts);
  try {
    return await fn(sim, client);
  } finally {
    await client.close();
    await sim.close();
  }
}

export function clientFor(sim: RunningSimulator, opts: Partial<CrmClientOptions> = {}): CrmClient {
  return createCrmClient({
    baseUrl: sim.baseUrl,
    username: sim.credentials.username,
    password: sim.credentials.password,
    limiter: createRateLimiter({ maxRps: 5000, maxConcurrency: 8 }),
    ...opts,
  });
}
