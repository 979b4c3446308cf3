import { createRng } from './rng.js';
import type { SimState } from './state.js';

export interface ChurnOptions {
  insertsPerSec?: number;
  updatesPerSec?: number;
  deletesPerSec?: number;
  /** Tick length in ms (default 20). */
  tickMs?: number;
}

export interface ChurnHandle {
  stop(): Promise<void>;
  /** Operations done so far. */
  counts(): { inserts: number; updates: number; deletes: number };
}

const STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'];

/**
 * Inserts, updates and deletes contacts at the given rates through the same write path as the API
 * (timestamps, counts, webhook events), so a sync running meanwhile sees pagination drift and late
 * changes. The choice of rows is drawn from an RNG seeded by the simulator seed.
 */
export function startChurn(state: SimState, opts: ChurnOptions, seed: number): ChurnHandle {
  const rng = createRng(seed ^ 0xc4e7);
  const tick = opts.tickMs ?? 20;
  const done = { inserts: 0, updates: 0, deletes: 0 };
  const owed = { inserts: 0, updates: 0, deletes: 0 };
  let serial = 0;
  const randomLiveId = (): number | undefined => {
    const n = state.contacts.size;
    return n === 0 ? undefined : state.contacts.idAt(Math.floor(rng() * n));
  };
  const timer = setInterval(() => {
    owed.inserts += ((opts.insertsPerSec ?? 0) * tick) / 1000;
    owed.updates += ((opts.updatesPerSec ?? 0) * tick) / 1000;
    owed.deletes += ((opts.deletesPerSec ?? 0) * tick) / 1000;
    while (owed.inserts >= 1) {
      owed.inserts--;
      serial++;
      state.createContact({
        email: `churn.${seed}.${state.contacts.size}.${serial}.${Math.floor(rng() * 1e9)}@churn.example.test`,
        status: STATUSES[Math.floor(rng() * STATUSES.length)],
        first_name: 'Churn',
        last_name: `Contact ${serial}`,
      });
      done.inserts++;
    }
    while (owed.updates >= 1) {
      owed.updates--;
      const id = randomLiveId();
      if (id === undefined) break;
      state.updateContact(id, { last_name: `Updated ${Math.floor(rng() * 1e9)}`, status: STATUSES[Math.floor(rng() * STATUSES.length)] });
      done.updates++;
    }
    while (owed.deletes >= 1) {
      owed.deletes--;
      const id = randomLiveId();
      if (id === undefined) break;
      state.deleteContact(id);
      done.deletes++;
    }
  }, tick);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
    },
    counts: () => ({ ...done }),
  };
}
