import type { Contact, Page, RawPage, RowRef } from '../src/crm/types.js';
import { createContactLoadBatch } from '../src/sync/contact-load-batch.js';
import { readContactsState, writeContactsState } from '../src/sync/contacts-state.js';
import { rawPageBodies, rowsAbove } from '../src/sync/raw-page-bodies.js';
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
  /** Rows of raw pages that did not fit the contact schema, kept in `_contact_rejects` (absent in results before it). */
  rejected?: number;
}

/** A page of the slice: parsed, or raw (its rows' ids read by the scan, the rows left to DuckDB). */
type SlicePage = Page<Contact> | RawPage;

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
      const raw = (deps.contactPages ?? 'raw') === 'raw';
      const fetchSlicePage = (page: number, perPage: number): Promise<SlicePage> => {
        const q = { page, perPage, order: 'asc' as const, orderBy: 'id' as const, customFields: true };
        return raw ? client.contacts.listPageRaw(q) : client.contacts.listPage(q);
      };
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
        const readPage = (n: number, perPage: number): Promise<SlicePage> => (n === first ? Promise.resolve(head) : read(n, perPage));
        let no = first - 1;
        let last: SlicePage | undefined;
        for await (const p of client.paginate<Contact | RowRef, SlicePage>(readPage, { perPage: input.perPage, order: 'asc', startPage: first, endPage: Math.max(first, startPage + pages - 1) })) {
          hb.throwIfCancelled();
          no++;
          last = p;
          // Raw: DuckDB parses the page and loads the rows past the cursor (and rejects rows whose
          // id it cannot read); parsed, the JavaScript path picks the same rows.
          const rows: (Contact | RowRef)[] = 'body' in p ? rowsAbove(p.items, cursor) : p.items.filter((c) => c.id > cursor);
          if (rows.length > 0) {
            if ('body' in p) await batch.addPages(rawPageBodies(p, no, { minId: cursor }), rows.length);
            else await batch.add(rows as Contact[]);
            result.rows += rows.length;
            for (const c of rows) if (c.id !== undefined && c.id > result.toId) result.toId = c.id;
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
        result.rejected = s.rejected;
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
