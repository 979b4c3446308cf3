import type { CrmClient } from '../crm/index.js';
import type { VerifyReader } from '../warehouse/verify-reads.js';

/** The parts of the CRM client verify reads through (its paginator and rate limiter included). */
export type VerifyCrmClient = Pick<CrmClient, 'contacts' | 'tags' | 'lists' | 'customFields' | 'companies' | 'campaigns' | 'funnels' | 'paginate'>;

export interface VerifyProgress {
  stream: string;
  /**
   * A stream read as several listings (funnel subscribers: one per funnel): which of them the
   * pages belong to, the `done`th of `total`. Pages count within that listing, rows over the stream.
   */
  listing?: { noun: string; done: number; total: number };
  pagesDone: number;
  /** Pages the listing reports, when it does. */
  pagesTotal: number | undefined;
  /** Rows of the stream read so far. */
  rows: number;
}

export interface VerifyDeps {
  client: VerifyCrmClient;
  /** Runs `fn` on a read-only warehouse session. */
  read: <T>(fn: (w: VerifyReader) => Promise<T>) => Promise<T>;
  /** Rows asked per contact page (a server may serve fewer; the paginator follows what it serves). */
  perPage?: number;
  /** Contact pages in flight at once; the client's shared rate limiter paces them. */
  concurrency?: number;
  onProgress?: (p: VerifyProgress) => void;
}

export const CONTACTS_PER_PAGE = 500;
export const SMALL_PER_PAGE = 100;
