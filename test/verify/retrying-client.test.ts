import { describe, expect, it } from 'vitest';
import { DatabaseBusyError } from '../../src/crm/index.js';
import { retryingVerifyClient } from '../../src/verify/retrying-client.js';
import { retryOutsideTemporal } from '../../src/crm/retry-outside-temporal.js';
import { clientFor, withSimClient } from '../crm/helpers/sim-client.js';

/**
 * Verify runs outside Temporal, and the client no longer retries a 423 or a 5xx itself: the
 * wrapper is verify's retry owner. Against the real-mode simulator with injected deadlocks, a
 * call fails as the client alone and succeeds through the wrapper; a non-retryable error is
 * not repeated. Pauses are recorded, not slept.
 */
describe('retryingVerifyClient', () => {
  it('repeats a call that hit a database deadlock until it succeeds, pausing between tries', async () => {
    await withSimClient({ contacts: 30, seed: 5, mode: 'real', faults: { deadlockRate: 0.5 } }, async (sim, client) => {
      const pauses: number[] = [];
      const retrying = retryingVerifyClient(client, { attempts: 40, sleep: async (ms) => void pauses.push(ms) });
      let pages = 0;
      for await (const p of retrying.paginate((page, perPage) => retrying.contacts.listPage({ page, perPage, order: 'asc', orderBy: 'id' }), { perPage: 5 })) pages += p.items.length > 0 ? 1 : 0;
      expect(pages).toBe(6);
      expect(sim.stats().status423).toBeGreaterThan(0); // otherwise this test proves nothing
      expect(pauses.length).toBe(sim.stats().status423);
      // The client alone gives up on the first deadlock.
      let seen: unknown;
      for (let i = 0; i < 20 && !seen; i++) await client.contacts.listPage({ page: 1, perPage: 5 }).catch((err: unknown) => (seen = err));
      expect(seen).toBeInstanceOf(DatabaseBusyError);
    });
  });

  it('does not repeat a call that failed for good', async () => {
    await withSimClient({ contacts: 3, seed: 5 }, async (sim) => {
      const wrong = clientFor(sim, { password: 'not-the-password' });
      try {
        const pauses: number[] = [];
        const retrying = retryingVerifyClient(wrong, { sleep: async (ms) => void pauses.push(ms) });
        const before = sim.stats().requests;
        await expect(retrying.contacts.listPage({ page: 1, perPage: 5 })).rejects.toMatchObject({ retryable: false });
        expect(sim.stats().requests - before).toBe(1);
        expect(pauses).toEqual([]);
      } finally {
        await wrong.close();
      }
    });
  });
});

describe('retryOutsideTemporal (the CLI pre-flight of sync and verify)', () => {
  it('checks the credentials through database deadlocks instead of failing the command', async () => {
    await withSimClient({ contacts: 3, seed: 7, mode: 'real', faults: { deadlockRate: 0.5 } }, async (sim, client) => {
      const pauses: number[] = [];
      for (let i = 0; i < 10; i++) await retryOutsideTemporal(() => client.verifyCredentials(), { attempts: 40, sleep: async (ms) => void pauses.push(ms) });
      expect(sim.stats().status423).toBeGreaterThan(0); // otherwise this test proves nothing
      expect(pauses.length).toBe(sim.stats().status423);
    });
  });

  it('ends at once on wrong credentials', async () => {
    await withSimClient({ contacts: 3, seed: 5 }, async (sim) => {
      const wrong = clientFor(sim, { password: 'not-the-password' });
      try {
        const pauses: number[] = [];
        await expect(retryOutsideTemporal(() => wrong.verifyCredentials(), { sleep: async (ms) => void pauses.push(ms) })).rejects.toMatchObject({ retryable: false });
        expect(pauses).toEqual([]);
      } finally {
        await wrong.close();
      }
    });
  });
});
