import { headRowsAt } from '../src/crm/index.js';
import type { Contact, Page, RawPage, RowRef } from '../src/crm/types.js';
import { CrmsyncError } from '../src/errors.js';
import { createContactLoadBatch } from '../src/sync/contact-load-batch.js';
import { readContactsState, writeContactsState, type ContactsState } from '../src/sync/contacts-state.js';
import { rawPageBodies } from '../src/sync/raw-page-bodies.js';
import { isNewestUpdatedFirst, updatedMs, updatedOrderVerdict } from '../src/sync/updated-order.js';
import { TieTracker, windowFor, type TieGroup } from '../src/sync/updated-ties.js';
import type { LoadStats } from '../src/warehouse/types.js';
import { activityClient, startHeartbeats, type SyncActivityDeps } from './sync-deps.js';

export interface UpdatedScanResult extends LoadStats {
  /** False when the CRM does not order by updated_at (known, or found by this run's probe). */
  ran: boolean;
  probed: boolean;
  pages: number;
  rows: number;
  requests: number;
  /** The CRM returned rows out of updated order: the capability is dropped and the next run sweeps. */
  orderBroken: boolean;
  /** Rows of raw pages that did not fit the contact schema, kept in `_contact_rejects` (absent in results before it). */
  rejected?: number;
  /** Groups of contacts sharing an updated_at across a page boundary, re-read whole on one page (absent in results before it). */
  tiesReread?: number;
}

/** A page of the scan: parsed, or raw with each row's id and `updated_at` read by the scan. */
type UpdatedPage = Page<Contact> | RawPage;

/** Rows of the ascending probe page: enough to see an order, cheap. */
const PROBE_ROWS = 20;
const MAX_PAGES = 100_000;
/**
 * Largest page asked for to re-read a tied group whole (fluentcrm-2.9 has no page cap and answers
 * 1,000 rows in about a quarter of a second: fixtures README, "Timings"). A larger group is left
 * to a sweep, which the scan then asks for.
 */
const MAX_TIE_WINDOW = 1_000;

/** The CRM refused the ordering parameter (the written interface names only id, email and created_at). */
function refused(err: unknown): boolean {
  return err instanceof CrmsyncError && (err.code === 'CRM_VALIDATION' || err.code === 'CRM_NOT_FOUND');
}

export function createUpdatedContactActivities(deps: SyncActivityDeps) {
  const { writes, logger } = deps;
  const now = deps.now ?? Date.now;

  const saveOrder = (patch: Partial<ContactsState>): Promise<void> => writes.run(async (w) => writeContactsState(w, { ...(await readContactsState(w)), ...patch }));

  return {
    /**
     * Updated-first scan: newest-updated contacts first, until past the watermark less the overlap
     * (same-second timestamps, clock skew, late commits). Catches field, status, email and custom
     * value edits, which change `updated_at`; not tag or list changes, which do not.
     */
    async scanUpdatedContacts(input: { perPage: number; loadId: string; overlapMs: number; reprobeAfterMs: number }): Promise<UpdatedScanResult> {
      const state = await writes.run(readContactsState);
      const result: UpdatedScanResult = { ran: false, probed: false, pages: 0, rows: 0, requests: 0, orderBroken: false, inserted: 0, updated: 0, unchanged: 0, deleted: 0, rejected: 0 };
      const known = state.updatedOrder;
      const probe = !known || (!known.supported && now() - known.probedAtMs >= input.reprobeAfterMs);
      if (known && !known.supported && !probe) return result;
      result.probed = probe;

      const client = activityClient(deps.client);
      const raw = (deps.contactPages ?? 'raw') === 'raw';
      const fetchUpdatedPage = (n: number, order: 'asc' | 'desc', perPage: number): Promise<UpdatedPage> => {
        const q = { page: n, perPage, order, orderBy: 'updated_at' as const, customFields: true };
        return raw ? client.contacts.listPageRaw(q, { updatedAt: true }) : client.contacts.listPage(q);
      };
      const unsupported = async (why: string): Promise<UpdatedScanResult> => {
        logger.info({ why }, 'the CRM does not order contacts by updated_at; the rolling sweep keeps them fresh');
        await saveOrder({ updatedOrder: { supported: false, probedAtMs: now() } });
        return result;
      };

      // The scan re-reads its overlap every run, so a quiet CRM's run finds the same few rows: when
      // the last one found fewer than the paginator's head, this one asks the head first (a small
      // page answers sooner). After a busier run the first page is a full one.
      const small = headRowsAt(input.perPage);
      const headRows = state.updatedWindowRows !== null && state.updatedWindowRows < small ? small : input.perPage;
      let first: UpdatedPage;
      try {
        first = await fetchUpdatedPage(1, 'desc', headRows);
        result.requests++;
        if (probe) {
          const asc = await fetchUpdatedPage(1, 'asc', PROBE_ROWS);
          result.requests++;
          if (!updatedOrderVerdict(first.items, asc.items)) return await unsupported('rows not in updated_at order');
        }
      } catch (err) {
        if (!refused(err)) throw err;
        result.requests++;
        return await unsupported('ordering parameter refused');
      }

      result.ran = true;
      const watermarkMs = state.updatedWatermark ? Date.parse(state.updatedWatermark) : (state.lastReconcileAtMs ?? 0);
      const cutoffMs = watermarkMs - input.overlapMs;
      let newestMs = state.updatedWatermark ? Date.parse(state.updatedWatermark) : Number.NEGATIVE_INFINITY;
      let previousMs = Number.POSITIVE_INFINITY;
      const hb = startHeartbeats(() => ({ pages: result.pages }));
      const batch = createContactLoadBatch(writes, () => ({ loadId: input.loadId, syncedAt: new Date(now()) }));
      const head = first;
      // Page 1 (or its head) was read above, as the probe's first half: it is not asked for again.
      const readPage = async (n: number, perPage: number): Promise<UpdatedPage> => {
        if (n === 1 && perPage === headRows) return head;
        result.requests++;
        return await fetchUpdatedPage(n, 'desc', perPage);
      };
      const ties = new TieTracker(cutoffMs);
      let tiesUnread = 0;
      // Rows read, each contact once: a tied group's rows can come on two pages and again on its re-read.
      const seen = new Set<number>();
      // The order was checked, so the rows to load are the page's first ones: a raw page loads
      // those (DuckDB parses them), a parsed one the same rows.
      const loadFirstRows = async (p: UpdatedPage, pageNo: number, rows: readonly (Contact | RowRef)[]): Promise<void> => {
        if ('body' in p) await batch.addPages(rawPageBodies(p, pageNo, { firstRows: rows.length }), rows.length);
        else await batch.add(rows as Contact[]);
        for (const r of rows) {
          if (r.id === undefined) result.rows++;
          else if (!seen.has(Number(r.id))) {
            seen.add(Number(r.id));
            result.rows++;
          }
        }
      };
      // One page holding the whole tied group, loaded down to its last row (the newer rows before
      // it again are unchanged). False when that page is too large, or the listing moved under the
      // scan so that the page does not hold the group whole: a sweep then reads what may be missing.
      const rereadTied = async (g: TieGroup): Promise<boolean> => {
        const w = windowFor(g, MAX_TIE_WINDOW);
        if (!w) return false;
        result.requests++;
        const p = await fetchUpdatedPage(w.page, 'desc', w.perPage);
        if (!isNewestUpdatedFirst(p.items)) {
          result.orderBroken = true;
          return false;
        }
        const upTo = p.items.filter((r) => updatedMs(r) >= g.ms).length;
        if (upTo > 0) await loadFirstRows(p, result.pages + 1, p.items.slice(0, upTo));
        return p.items.filter((r) => updatedMs(r) === g.ms).length >= g.end - g.start;
      };
      try {
        // Past the watermark (less the overlap): every later row is older still.
        const pastCutoff = (p: Page<Contact | RowRef>) => {
          const last = p.items[p.items.length - 1];
          return !last || updatedMs(last) < cutoffMs;
        };
        for await (const p of client.paginate<Contact | RowRef, UpdatedPage>(readPage, { perPage: input.perPage, maxPages: MAX_PAGES, stopAfter: pastCutoff, headRows })) {
          hb.throwIfCancelled();
          result.pages++;
          // Checked on every page: the parameter is not trusted, the rows are.
          if (!isNewestUpdatedFirst(p.items, previousMs)) {
            result.orderBroken = true;
            break;
          }
          ties.page(p.items.map(updatedMs));
          const changed: (Contact | RowRef)[] = p.items.filter((c) => updatedMs(c) >= cutoffMs);
          if (changed.length > 0) {
            await loadFirstRows(p, result.pages, changed);
            newestMs = Math.max(newestMs, updatedMs(changed[0]!));
          }
          hb.beat();
          const last = p.items[p.items.length - 1];
          if (last) previousMs = updatedMs(last);
        }
        if (!result.orderBroken) {
          const groups = ties.finish();
          for (const g of groups) {
            hb.throwIfCancelled();
            if (!(await rereadTied(g))) tiesUnread++;
            if (result.orderBroken) break;
          }
          result.tiesReread = groups.length - tiesUnread;
        }
        const stats = await batch.flush();
        result.inserted += stats.inserted;
        result.updated += stats.updated;
        result.unchanged += stats.unchanged;
        result.rejected = stats.rejected;
      } finally {
        hb.stop();
      }
      if (tiesUnread > 0) {
        logger.warn({ groups: tiesUnread }, 'contacts sharing an updated_at across pages could not be re-read on one page; the next run sweeps');
      }
      if (result.orderBroken) {
        logger.warn('the CRM returned contacts out of updated_at order; dropping the updated-first scan, the next run sweeps');
        await saveOrder({ updatedOrder: { supported: false, probedAtMs: now() }, needsReconcile: true });
        return result;
      }
      await saveOrder({
        updatedOrder: { supported: true, probedAtMs: probe || !known ? now() : known.probedAtMs },
        updatedWatermark: Number.isFinite(newestMs) ? new Date(newestMs).toISOString() : state.updatedWatermark,
        updatedWindowRows: result.rows,
        ...(tiesUnread > 0 ? { needsReconcile: true } : {}),
      });
      return result;
    },
  };
}
