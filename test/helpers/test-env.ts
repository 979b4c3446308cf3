import { join } from 'node:path';
import { inject } from 'vitest';
import { testTemporalAddress } from './temporal.js';

/**
 * Environment for crmsync in a test: the simulator as the CRM, the warehouse and state under `dir`,
 * and the suite's Temporal dev server. `extra` adds or overrides variables.
 */
export function testEnv(sim: { baseUrl: string; credentials: { username: string; password: string } }, dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    TEMPORAL_ADDRESS: testTemporalAddress(),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ...extra,
  };
}
