import { createCrmClient, type CrmClient, type CrmClientOptions } from '../../../src/crm/index.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../../src/simulator/index.js';

/** A simulator on port 0 and a client with its own limiter, both closed after `fn`. */
export async function withSimClient<T>(simOptions: SimulatorOptions, clientOptions: Partial<CrmClientOptions>, fn: (sim: RunningSimulator, client: CrmClient) => Promise<T>): Promise<T> {
  const sim = await startSimulator(simOptions);
  try {
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, ...clientOptions });
    try {
      return await fn(sim, client);
    } finally {
      await client.close();
    }
  } finally {
    await sim.close();
  }
}

export const upsertRequests = (sim: RunningSimulator): number => sim.stats().byRoute['POST /subscribers'] ?? 0;
