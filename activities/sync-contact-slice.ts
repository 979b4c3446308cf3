import type { Contact, Page } from '../src/crm/types.js';
import { createContactLoadBatch } from '../src/sync/contact-load-batch.js';
import { readContactsState, writeContactsState } from '../src/sync/contacts-state.js';
import { liveContactCount } from '../src/warehouse/scan-tables.js';
import { liveContactsUpTo } from '../src/warehouse/live-contacts-up-to.js';
import type { LoadStats } from '../src/warehouse/types.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface SliceResult extends LoadStats {
  pages: number;
  rows: number;
  requests: number;
  /** The id range re-read, and whether it ended the cycle (every contact re-read since it began). */
  fromId: number;
  toId: number;
  cycleDone: boolean;
}

/** Pages of the slice: the id-ascending page count spread over `sweepRuns` runs. */
export function slicePages(liveCount: number, perPage: number, sweepRuns: number): number {
  const pages = Math.max(1, Math.ceil(liveCount / perPage));
  return Math.max(1, Math.ceil(pages / Math.max(1, sweepRuns)));
}

export function createContactSliceActivities(deps: SyncActivityDeps) {
  const { writes } = deps;
  const now = deps.now ?? Date.now;

  return {
    /**
     * Rolling sweep: re-reads the next slice of the id space (id ascending, from the cursor), so
     * that every contact is re-read within `sweepRuns` incremental runs. The backstop for changes
     * the other checks cannot see (a CRM without updated_at ordering; membership changes that
     * leave every count equal). Deletes are left to the reconcile sweep, which counts reveal.
     */
    async sweepContactSlice(input: { perPage: number; loadId: string; sweepRuns: number }): Promise<SliceResult> {
      const client = activityClient(deps.client);
      const fetchSlicePage = (page: number, perPage: number) => client.contacts.listPage({ page, perPage, order: 'asc', orderBy: 'id', customFields: true });
      const startedAtMs = now();
      const { state, offset, pages } = await writes.run(async (w) => {
        const s = await readContactsState(w);
        // Where the cursor sits in the CRM's id-ascending listing, as far as the warehouse knows.
        const at = s.sweepCursorId > 0 ? await liveContactsUpTo(w, s.sweepCursorId) : 0;
        return { state: s, offset: at, pages: slicePages(await liveContactCount(w), input.perPage, input.sweepRuns) };
      });
      const startPage = Math.floor(offset / input.perPage) + 1;
      const cursor = state.sweepCursorId;
      const result: SliceResult = { pages: 0, rows: 0, requests: 0, fromId: cursor + 1, toId: cursor, cycleDone: false, inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
      const read = async (page: number, perPage = input.perPage) => {
        result.requests++;
        result.pages++;
        return await fetchSlicePage(page, perPage);
      };
      const hb = startHeartbeats(() => ({ pages: result.pages }));
      const batch = createContactLoadBatch(writes, () => ({ loadId: input.loadId, syncedAt: new Date(now()) }));
      try {
        let page = startPage;
        let head = await read(page);
        // Unless the cursor ends a page, its page holds it; if it starts above the cursor, rows
        // shifted left (deletes below it): step back until it does not. Where the cursor ends a
        // page, a shift cannot be seen from here, but deletes change the CRM's total, which makes
        // the run a reconcile sweep instead.
        while (offset % input.perPage !== 0 && page > 1 && (head.items[0]?.id ?? 0) > cursor) {
          page--;
          head = await read(page);
        }
        const first = page;
        // The page found above is not asked for again; the slice ends where it was planned to.
        const readPage = (n: number, perPage: number): Promise<Page<Contact>> => (n === first ? Promise.resolve(head) : read(n, perPage));
        let no = first - 1;
        let last: Page<Contact> | undefined;
        for await (const p of client.paginate(readPage, { perPage: input.perPage, order: 'asc', startPage: first, endPage: Math.max(first, startPage + pages - 1) })) {
          hb.throwIfCancelled();
          no++;
          last = p;
          const rows: Contact[] = p.items.filter((c) => c.id > cursor);
          if (rows.length > 0) {
            await batch.add(rows);
            result.rows += rows.length;
            result.toId = Math.max(result.toId, ...rows.map((c) => c.id));
          }
          hb.beat();
        }
        // The listing ended within the slice: every contact has been re-read since the cycle began.
        if (last && (last.items.length === 0 || (last.lastPage !== undefined ? no >= last.lastPage : last.items.length < input.perPage))) {
          result.cycleDone = true;
        }
        const s = await batch.flush();
        result.inserted += s.inserted;
        result.updated += s.updated;
        result.unchanged += s.unchanged;
      } finally {
        hb.stop();
      }
      await writes.run(async (w) => {
        const s = await readContactsState(w);
        const cycleStart = s.sweepCycleStartedAtMs ?? startedAtMs;
        await writeContactsState(
          w,
          result.cycleDone
            ? { ...s, sweepCursorId: 0, sweepCycleStartedAtMs: null, sweepCycleRuns: 0, lastSweepCycleStartedAtMs: cycleStart, sweepRuns: input.sweepRuns }
            : { ...s, sweepCursorId: result.toId, sweepCycleStartedAtMs: cycleStart, sweepCycleRuns: s.sweepCycleRuns + 1, sweepRuns: input.sweepRuns },
        );
      });
      return result;
    },
  };
}
