import type { Contact } from '../crm/types.js';
import type { ContactPage } from '../warehouse/load-contact-pages.js';
import type { LoadStats } from '../warehouse/types.js';
import type { WriteJobs } from './warehouse-port.js';

/**
 * Most rows per load. A merge into a large contacts table costs about the same for 250 rows as
 * for thousands (the contact sink batches scan pages for the same reason), so pages are pooled.
 */
const MAX_ROWS = 5_000;

/** A batch's totals; `rejected`: rows of raw pages that did not fit, kept in `_contact_rejects`. */
export interface BatchStats extends LoadStats {
  rejected: number;
}

export interface ContactLoadBatch {
  /** Queues rows; loads them once `MAX_ROWS` are waiting. */
  add(rows: readonly Contact[]): Promise<void>;
  /**
   * Queues pages as the CRM sent them, for DuckDB to parse (`loadContactPages`), with the number
   * of rows they will load; loads them once `MAX_ROWS` are waiting.
   */
  addPages(pages: readonly ContactPage[], rows: number): Promise<void>;
  /** Loads whatever waits; returns the totals of every load. */
  flush(): Promise<BatchStats>;
}

/**
 * Pools contact pages into few loads, one after another (a later row of a contact wins: a later
 * page, for raw pages). One batch takes parsed rows or raw pages; given both, a load takes the
 * parsed rows first.
 */
export function createContactLoadBatch(writes: WriteJobs, ctx: () => { loadId: string; syncedAt: Date }, maxRows = MAX_ROWS): ContactLoadBatch {
  const stats: BatchStats = { inserted: 0, updated: 0, unchanged: 0, deleted: 0, rejected: 0 };
  let waiting = new Map<number, Contact>();
  let pages: ContactPage[] = [];
  let pageRows = 0;
  let chain: Promise<void> = Promise.resolve();
  const add = (s: LoadStats & { rejected?: number }): void => {
    stats.inserted += s.inserted;
    stats.updated += s.updated;
    stats.unchanged += s.unchanged;
    stats.deleted += s.deleted;
    stats.rejected += s.rejected ?? 0;
  };
  const load = (): Promise<void> => {
    if (waiting.size === 0 && pages.length === 0) return chain;
    const rows = [...waiting.values()];
    const bodies = pages;
    waiting = new Map();
    pages = [];
    pageRows = 0;
    chain = chain.then(async () => {
      if (rows.length > 0) add(await writes.run((w) => w.loadContacts(rows, ctx())));
      if (bodies.length > 0) add(await writes.run((w) => w.loadContactPages(bodies, ctx())));
    });
    return chain;
  };
  return {
    async add(rows) {
      for (const c of rows) waiting.set(c.id, c);
      if (waiting.size >= maxRows) await load();
    },
    async addPages(added, rows) {
      pages.push(...added);
      pageRows += rows;
      if (pageRows >= maxRows) await load();
    },
    async flush() {
      await load();
      return { ...stats };
    },
  };
}
