import { headRowsAt } from '../src/crm/index.js';
import type { Contact, Page, RawPage, RowRef } from '../src/crm/types.js';
import { readContactsState, writeContactsState } from '../src/sync/contacts-state.js';
import { rawPageBodies, rowsAbove } from '../src/sync/raw-page-bodies.js';
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
  /** Rows of raw pages that did not fit the contact schema, kept in `_contact_rejects` (absent in results before it). */
  rejected?: number;
}

const MAX_NEW_PAGES = 100_000;
const NO_STATS: LoadStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };

function addStats(into: NewContactsResult, add: LoadStats & { rejected?: number }): void {
  into.inserted += add.inserted;
  into.updated += add.updated;
  into.unchanged += add.unchanged;
  into.deleted += add.deleted;
  into.rejected = (into.rejected ?? 0) + (add.rejected ?? 0);
}

/** The newest page of contacts (id descending, with custom values): raw or parsed, as the sync loads them. */
export function fetchNewestContactPage(deps: SyncActivityDeps, page: number, perPage: number): Promise<Page<Contact> | RawPage> {
  const client = activityClient(deps.client);
  const q = { page, perPage, order: 'desc' as const, orderBy: 'id' as const, customFields: true };
  return (deps.contactPages ?? 'raw') === 'raw' ? client.contacts.listPageRaw(q) : client.contacts.listPage(q);
}

/**
 * Incremental: reads the newest contacts first and stops at the highest id already held, so a
 * run with nothing new (most) costs one small request, the paginator's head (`headRowsAt`); when
 * all its rows are new, page 1 is read at the run's page size. The page's total, against the
 * live count, reveals deletes. `head`: that first request already made (the end of a scan makes it
 * while its last lake buckets are published); it is not counted again.
 */
export async function fetchNewContactsWith(deps: SyncActivityDeps, input: { perPage: number; loadId: string }, head?: Promise<Page<Contact> | RawPage>): Promise<NewContactsResult> {
  const { writes } = deps;
  const now = deps.now ?? Date.now;
  const client = activityClient(deps.client);
  const sinceMaxId = (await writes.run(readContactsState)).maxId;
  const result: NewContactsResult = { ...NO_STATS, pages: 0, rows: 0, requests: 0, crmTotal: 0, liveCount: 0, maxId: sinceMaxId, rejected: 0 };
  const headRows = headRowsAt(input.perPage);
  const fetchNewestPage = (page: number, perPage: number): Promise<Page<Contact> | RawPage> => {
    if (page === 1 && perPage === headRows && head) return head;
    result.requests++;
    return fetchNewestContactPage(deps, page, perPage);
  };
  const hb = startHeartbeats(() => ({ pages: result.pages }));
  try {
    // Newest first: once a row is one already held, every row after it is held too.
    const reachedHeld = (p: Page<Contact | RowRef>) => p.items.some((c) => c.id !== undefined && c.id <= sinceMaxId);
    for await (const p of client.paginate<Contact | RowRef, Page<Contact> | RawPage>(fetchNewestPage, {
      perPage: input.perPage,
      order: 'desc',
      maxPages: MAX_NEW_PAGES,
      stopAfter: reachedHeld,
      headRows,
    })) {
      hb.throwIfCancelled();
      if (result.pages === 0) result.crmTotal = p.total ?? p.items.length;
      result.pages++;
      // Raw: DuckDB parses the page and loads the rows above the highest id held (and rejects
      // rows whose id it cannot read); parsed, the JavaScript path picks the same rows.
      const fresh: (Contact | RowRef)[] = 'body' in p ? rowsAbove(p.items, sinceMaxId) : p.items.filter((c) => c.id > sinceMaxId);
      if (fresh.length > 0) {
        const ctx = { loadId: input.loadId, syncedAt: new Date(now()) };
        const stats = await writes.run((w) => ('body' in p ? w.loadContactPages(rawPageBodies(p, result.pages, { minId: sinceMaxId }), ctx) : w.loadContacts(fresh as Contact[], ctx)));
        addStats(result, stats);
        result.rows += fresh.length;
        for (const c of fresh) if (c.id !== undefined && c.id > result.maxId) result.maxId = c.id;
      }
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
}

export function createNewContactActivities(deps: SyncActivityDeps) {
  return {
    /** Contacts above the highest id held (`fetchNewContactsWith`). */
    async fetchNewContacts(input: { perPage: number; loadId: string }): Promise<NewContactsResult> {
      return await fetchNewContactsWith(deps, input);
    },
  };
}
