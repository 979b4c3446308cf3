import type { Page } from '../crm/types.js';
import { CrmsyncError } from '../errors.js';
import type { SyncCrmClient } from './crm-port.js';

const PER_PAGE = 100;
/** A bound on pages of a "small" stream: past it the listing is not small and something is wrong. */
const MAX_PAGES = 10_000;

/**
 * Reads every page of a small listing through the client's one paginator, so it ends where every
 * other page loop ends (`last_page` and `total`, a page short against what the server served).
 */
export async function readAllPages<T>(
  client: Pick<SyncCrmClient, 'paginate'>,
  fetch: (page: number, perPage: number) => Promise<Page<T>>,
  onPage?: () => void,
): Promise<{ rows: T[]; requests: number }> {
  const rows: T[] = [];
  let requests = 0;
  const counted = (page: number, perPage: number): Promise<Page<T>> => {
    requests++;
    return fetch(page, perPage);
  };
  // One page past the bound, so a listing longer than it is an error rather than a silent stop.
  for await (const p of client.paginate(counted, { perPage: PER_PAGE, maxPages: MAX_PAGES + 1 })) {
    if (requests > MAX_PAGES) {
      throw new CrmsyncError('SYNC_TOO_MANY_PAGES', `A listing returned more than ${MAX_PAGES} pages; check that the CRM honours per_page and page.`);
    }
    rows.push(...p.items);
    onPage?.();
  }
  return { rows, requests };
}
