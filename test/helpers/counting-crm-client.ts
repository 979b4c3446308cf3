import { createCrmClient } from '../../src/crm/index.js';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import type { RawPage } from '../../src/crm/types.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { SyncCrmClient } from '../../src/sync/crm-port.js';

export type RawPageQuery = Parameters<SyncCrmClient['contacts']['listPageRaw']>[0];

/**
 * The simulator's client in `timeZone`, counting contact listing requests of each kind (parsed
 * in JavaScript, or raw bodies for DuckDB); raw bodies pass through `edit`, and an edited body's
 * row spans are those of the edited body.
 */
export function countingCrmClient(sim: RunningSimulator, timeZone: string, edit: (q: RawPageQuery, body: string) => string = (_, b) => b) {
  const real = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, timezone: timeZone });
  const calls = { parsed: 0, raw: 0 };
  /** The page size each raw listing request asked for, in order, and the requests themselves. */
  const rawPerPage: number[] = [];
  const rawQueries: RawPageQuery[] = [];
  const client = {
    ...real,
    contacts: {
      ...real.contacts,
      listPage: async (q: Parameters<SyncCrmClient['contacts']['listPage']>[0]) => {
        calls.parsed++;
        return real.contacts.listPage(q);
      },
      listPageRaw: async (q: RawPageQuery, read?: { updatedAt?: boolean }): Promise<RawPage> => {
        calls.raw++;
        rawPerPage.push(q.perPage);
        rawQueries.push(q);
        const p = await real.contacts.listPageRaw(q, read);
        const body = edit(q, p.body);
        if (body === p.body) return p;
        // An edited body has rows of its own: where they lie is read again, as the client does for what it got.
        const { rowSpans, ...rest } = p;
        const spans = rowSpans && scanContactPage(body, { page: q.page, perPage: q.perPage }, 'GET /subscribers').rowSpans;
        return { ...rest, body, ...(spans ? { rowSpans: spans } : {}) };
      },
    },
  } as unknown as SyncCrmClient;
  return { client, calls, rawPerPage, rawQueries };
}
