import { join } from 'node:path';
import { inject } from 'vitest';
import { testTemporalAddress } from './temporal.js';

/**
 * Environment for crmsync in a test: the simulator as the CRM, the warehouse and state under `dir`,
 * and the suite's Temporal dev server. `extra` adds or overrides variables.
 */
export function testEnv(sim: SimulatorCredentials, dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...embeddedTestEnv(sim, dir), TEMPORAL_ADDRESS: testTemporalAddress(), TEMPORAL_NAMESPACE: inject('temporalNamespace'), ...extra };
}

/**
 * The same on the embedded default: no TEMPORAL_ADDRESS, so crmsync starts (or joins) its own dev
 * server under `dir`, as a user's commands do.
 */
export function embeddedTestEnv(sim: SimulatorCredentials, dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CRM_BASE_URL: sim.baseUrl,
    CRM_USERNAME: sim.credentials.username,
    CRM_PASSWORD: sim.credentials.password,
    CRMSYNC_DB: join(dir, 'crm.duckdb'),
    CRMSYNC_LAKE: join(dir, 'lake'),
    CRMSYNC_DATA_DIR: dir,
    ...extra,
  };
}

type SimulatorCredentials = { baseUrl: string; credentials: { username: string; password: string } };
