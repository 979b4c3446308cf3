import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createSyncActivities } from '../../activities/sync-activities.js';
import { createCrmClient, createRateLimiter } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import { openWarehouseOwner } from '../../src/warehouse/index.js';
import { startHoldProxy } from './helpers/hold-proxy.js';

/**
 * A cancelled activity must not wait for the CRM: the request in flight is aborted (its
 * connection closed) and the activity ends as a cancellation, which Temporal does not retry.
 * The simulator's answer is held by a relay until the test releases it, so the order of events
 * shows whether the client waited for it; no wall-clock threshold is involved.
 */
describe('cancelling an activity while a CRM request is in flight', () => {
  it.each([
    ['fetchNewContacts (a contact page loop)', 'contacts'],
    ['syncEntityStream (a small stream read whole)', 'campaigns'],
  ] as const)('%s: the request is aborted and the activity ends cancelled', { timeout: 60_000 }, async (_name, stream) => {
    const sim = await startSimulator({ contacts: 120, seed: 11 });
    const held = stream === 'contacts' ? '/v2/subscribers' : '/v2/campaigns';
    const proxy = await startHoldProxy(sim.baseUrl, (method, path) => method === 'GET' && path === held);
    const client = createCrmClient({
      baseUrl: proxy.baseUrl,
      username: sim.credentials.username,
      password: sim.credentials.password,
      limiter: createRateLimiter({ maxRps: 5000, maxConcurrency: 8 }),
    });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-cancel-'));
    const env = new MockActivityEnvironment();
    const writes = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
    try {
      const acts = createSyncActivities({ client, writes, logger: silentLogger });
      const run = stream === 'contacts' ? env.run(acts.fetchNewContacts, { perPage: 50, loadId: 'L1' }) : env.run(acts.syncEntityStream, { stream: 'campaigns' as const, loadId: 'L1' });
      const outcome = run.then(
        () => 'completed',
        (err: unknown) => {
          proxy.events.push('activity ended');
          return err;
        },
      );
      await proxy.heldAtLeast(1);
      env.cancel();
      const err = await outcome;
      await proxy.closedWhileHeld();
      // Ended before the CRM answered: the held response was never released, and the client
      // closed the connection of the request in flight.
      expect(proxy.events).not.toContain('released');
      expect(proxy.events[0]).toBe(`held GET ${held}`);
      expect(proxy.events).toContain('closed by the client while held');
      expect(proxy.events.filter((e) => e.startsWith('held '))).toHaveLength(1);
      expect(err).toBeInstanceOf(CancelledFailure);
    } finally {
      proxy.release();
      await writes.close();
      await client.close();
      await proxy.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
