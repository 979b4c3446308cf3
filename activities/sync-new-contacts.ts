import type { Contact, Page } from '../src/crm/types.js';
import { readContactsState, writeContactsState } from '../src/sync/contacts-state.js';
import { liveContactCount } from '../src/warehouse/scan-tables.js';
import type { LoadStats } from '../src/warehouse/types.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface NewContactsResult extends LoadStats {
  pages: number;
  rows: number;
  requests: number;
  crmTotal: number;
  liveCount: number;
  maxId: number;
}

const MAX_NEW_PAGES = 100_000;
const NO_STATS: LoadStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };

function addStats(into: LoadStats, add: LoadStats): void {
  into.inserted += add.inserted;
  into.updated += add.updated;
  into.unchanged += add.unchanged;
  into.deleted += add.deleted;
}

export function createNewContactActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  const now = deps.now ?? Date.now;
  const ctxFor = (loadId: string) => ({ loadId, syncedAt: new Date(now()) });

  return {
    /**
     * Incremental: reads the newest contacts first and stops at the highest id already held, so a
     * run with nothing new costs one request. The page's total, against the live count, reveals deletes.
     */
    async fetchNewContacts(input: { perPage: number; loadId: string }): Promise<NewContactsResult> {
      const client = activityClient(deps.client);
      const sinceMaxId = (await writes.run(readContactsState)).maxId;
      const result: NewContactsResult = { ...NO_STATS, pages: 0, rows: 0, requests: 0, crmTotal: 0, liveCount: 0, maxId: sinceMaxId };
      const fetchNewestPage = (page: number, perPage: number) => {
        result.requests++;
        return client.contacts.listPage({ page, perPage, order: 'desc', orderBy: 'id', customFields: true });
      };
      const hb = startHeartbeats(() => ({ pages: result.pages }));
      try {
        // Newest first: once a row is one already held, every row after it is held too.
        const reachedHeld = (p: Page<Contact>) => p.items.some((c) => c.id <= sinceMaxId);
        for await (const p of client.paginate(fetchNewestPage, { perPage: input.perPage, order: 'desc', maxPages: MAX_NEW_PAGES, stopAfter: reachedHeld })) {
          hb.throwIfCancelled();
          if (result.pages === 0) result.crmTotal = p.total ?? p.items.length;
          const fresh = p.items.filter((c) => c.id > sinceMaxId);
          if (fresh.length > 0) {
            const ctx = ctxFor(input.loadId);
            const stats = await writes.run((w) => w.loadContacts(fresh, ctx));
            addStats(result, stats);
            result.rows += fresh.length;
            result.maxId = Math.max(result.maxId, ...fresh.map((c) => c.id));
          }
          result.pages++;
          hb.beat();
        }
      } finally {
        hb.stop();
      }
      return await writes.run(async (w) => {
        const state = await readContactsState(w);
        await writeContactsState(w, { ...state, maxId: Math.max(state.maxId, result.maxId), lastRunAtMs: now() });
        return { ...result, liveCount: await liveContactCount(w) };
      });
    },
  };
}
