import type { Page } from '../crm/types.js';
import { CrmsyncError } from '../errors.js';

const PER_PAGE = 100;
/** A bound on pages of a "small" stream: past it the listing is not small and something is wrong. */
const MAX_PAGES = 10_000;

/** Reads every page of a listing; stops on the last page, a short page or an empty one. */
export async function readAllPages<T>(fetch: (page: number, perPage: number) => Promise<Page<T>>, onPage?: () => void): Promise<{ rows: T[]; requests: number }> {
  const rows: T[] = [];
  let requests = 0;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const p = await fetch(page, PER_PAGE);
    requests++;
    rows.push(...p.items);
    onPage?.();
    const last = p.lastPage !== undefined ? page >= p.lastPage : p.items.length < PER_PAGE;
    if (last || p.items.length === 0) return { rows, requests };
  }
  throw new CrmsyncError('SYNC_TOO_MANY_PAGES', `A listing returned more than ${MAX_PAGES} pages; check that the CRM honours per_page and page.`);
}
