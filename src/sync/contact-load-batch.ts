import type { Contact } from '../crm/types.js';
import type { LoadStats } from '../warehouse/types.js';
import type { WriteJobs } from './warehouse-port.js';

/**
 * Most rows per load. A merge into a large contacts table costs about the same for 250 rows as
 * for thousands (the contact sink batches scan pages for the same reason), so pages are pooled.
 */
const MAX_ROWS = 5_000;

export interface ContactLoadBatch {
  /** Queues rows; loads them once `MAX_ROWS` are waiting. */
  add(rows: readonly Contact[]): Promise<void>;
  /** Loads whatever waits; returns the totals of every load. */
  flush(): Promise<LoadStats>;
}

/** Pools contact pages into few loads, one after another (a later row of a contact wins). */
export function createContactLoadBatch(writes: WriteJobs, ctx: () => { loadId: string; syncedAt: Date }, maxRows = MAX_ROWS): ContactLoadBatch {
  const stats: LoadStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
  let waiting = new Map<number, Contact>();
  let chain: Promise<void> = Promise.resolve();
  const load = (): Promise<void> => {
    if (waiting.size === 0) return chain;
    const rows = [...waiting.values()];
    waiting = new Map();
    chain = chain.then(async () => {
      const s = await writes.run((w) => w.loadContacts(rows, ctx()));
      stats.inserted += s.inserted;
      stats.updated += s.updated;
      stats.unchanged += s.unchanged;
      stats.deleted += s.deleted;
    });
    return chain;
  };
  return {
    async add(rows) {
      for (const c of rows) waiting.set(c.id, c);
      if (waiting.size >= maxRows) await load();
    },
    async flush() {
      await load();
      return { ...stats };
    },
  };
}
