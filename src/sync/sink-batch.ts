import type { Contact } from '../crm/types.js';
import { BUCKETED_LAKE_TABLES } from '../warehouse/lake-layout.js';
import type { ContactPage } from '../warehouse/load-contact-pages.js';
import { loadRecordingScannedPages, recordScannedPages } from '../warehouse/scan-tables.js';
import type { TypedContactPages } from '../warehouse/typing-lane.js';
import type { LoadStats } from '../warehouse/types.js';
import type { ScannedPage, SinkStats } from './contact-sink.js';
import type { WarehouseSession, WriteJobs } from './warehouse-port.js';

export const rowsOf = (p: ScannedPage): number => p.items.length + (p.raw?.rows ?? 0);
export const idsOf = (p: ScannedPage): number[] => (p.raw ? [...p.items.map((c) => c.id), ...p.raw.ids] : p.items.map((c) => c.id));

/** How many of `queue`'s first pages one load takes: at most `maxRows` rows, or one page. */
export function batchLength(queue: readonly { page: ScannedPage }[], maxRows: number): number {
  let [n, rows] = [0, 0];
  while (n < queue.length && (n === 0 || rows + rowsOf(queue[n]!.page) <= maxRows)) rows += rowsOf(queue[n++]!.page);
  return n;
}

/** The batch's pages as the CRM sent them, in order, for `loadContactPages`. */
export function rawBodies(pages: readonly ScannedPage[]): ContactPage[] {
  const bodies: ContactPage[] = [];
  for (const page of pages) {
    const spans = page.raw?.rowSpans;
    for (const [k, body] of (page.raw?.bodies ?? []).entries()) bodies.push(k === 0 && spans ? { page: page.page, body, rowSpans: spans } : { page: page.page, body });
  }
  return bodies;
}

/** Pages that are all as the CRM sent them, none with rows parsed in JavaScript: they can be typed aside. */
export function allRaw(pages: readonly ScannedPage[]): boolean {
  return pages.every((p) => p.raw !== undefined && p.items.length === 0);
}

function addStats(into: SinkStats, add: LoadStats & { rejected?: number }): void {
  into.inserted += add.inserted;
  into.updated += add.updated;
  into.unchanged += add.unchanged;
  into.deleted += add.deleted;
  into.rejected += add.rejected ?? 0;
}

/**
 * Loads one batch of the sink in the write scope `w` and records its pages in the scan's page log,
 * in the last load's commit (a crash leaves both or neither). `typed`: the batch's raw pages as
 * `typeContactPagesAside` typed them while the writer did other work; when that failed (it
 * resolves to undefined), the pages are typed here as if never typed aside, so an error the pages
 * themselves cause is raised by this load.
 */
export async function loadSinkBatch(w: WarehouseSession, pages: readonly ScannedPage[], typed?: Promise<TypedContactPages | undefined>): Promise<SinkStats> {
  // A row shifted by drift can appear on two pages of one batch: keep one copy (raw pages: the
  // load keeps the later one).
  const byId = new Map<number, Contact>();
  for (const page of pages) for (const c of page.items) byId.set(c.id, c);
  const bodies = rawBodies(pages);
  const first = pages[0]!;
  const ctx = { loadId: first.loadId, syncedAt: first.syncedAt };
  const stats: SinkStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0, rejected: 0 };
  const records = pages.map((page) => ({ scanKey: page.scanKey, page: page.page, ids: idsOf(page), reportedTotal: page.reportedTotal, at: page.syncedAt }));
  const loads: (() => Promise<LoadStats & { rejected?: number }>)[] = [];
  if (byId.size > 0) loads.push(() => w.loadContacts([...byId.values()], ctx));
  if (bodies.length > 0) {
    loads.push(async () => {
      const done = await typed;
      return done ? w.loadTypedContactPages(done, ctx) : w.loadContactPages(bodies, ctx);
    });
  }
  for (const [i, load] of loads.entries()) addStats(stats, i < loads.length - 1 ? await load() : await loadRecordingScannedPages(w, records, load));
  if (loads.length === 0) await recordScannedPages(w, records);
  return stats;
}

/**
 * Publishes lake buckets the sink loaded. In one lane (beside a scan's loads) on a connection of
 * its own, so the loads go on meanwhile (publish-aside.ts): the write job ends once the publish has
 * started, and this resolves once it has ended. In two (nothing left to load) on the writer's.
 */
export async function publishBuckets(writes: WriteJobs, buckets: readonly number[], lanes: 1 | 2): Promise<void> {
  if (lanes === 2) return writes.run((w) => w.publishLake(BUCKETED_LAKE_TABLES, { buckets, lanes }));
  const { done } = await writes.run((w) => w.publishBucketsAside(BUCKETED_LAKE_TABLES, buckets));
  await done;
}
