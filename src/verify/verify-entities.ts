import { CrmsyncError } from '../errors.js';
import type { Page } from '../crm/types.js';
import { ENTITY_SPECS, FUNNEL_SUBSCRIBER_SPEC } from '../warehouse/entity-specs.js';
import type { EntityTable } from '../warehouse/types.js';
import { readEntityRows, readFunnelSubscriberRows } from '../warehouse/verify-reads.js';
import type { ValueType } from './compare-values.js';
import type { Difference } from './difference.js';
import { rowDifferences, type RowStream } from './row-differences.js';
import { SMALL_PER_PAGE, type VerifyDeps, type VerifyProgress } from './verify-deps.js';

const TITLES: Record<EntityTable, string> = { tags: 'title', lists: 'title', custom_fields: 'label', companies: 'name', campaigns: 'title', funnels: 'title' };
const NOUNS: Record<EntityTable, string> = { tags: 'tag', lists: 'list', custom_fields: 'custom field', companies: 'company', campaigns: 'campaign', funnels: 'funnel' };

function entityStream(table: EntityTable): RowStream {
  const spec = ENTITY_SPECS[table];
  const key = spec.key[0] as string;
  return { stream: table, noun: NOUNS[table], columns: spec.columns as RowStream['columns'], key: (r) => String(r[key]), title: TITLES[table] };
}

const FUNNEL_SUBSCRIBERS: RowStream = {
  stream: 'funnel_subscribers',
  noun: 'funnel subscriber',
  columns: FUNNEL_SUBSCRIBER_SPEC.columns as ReadonlyArray<readonly [string, ValueType]>,
  key: (r) => `${String(r.funnel_id)}/${String(r.id)}`,
};

export interface EntityVerifyResult {
  diffs: Difference[];
  /** Streams not compared, with the reason (e.g. the CRM's companies module is off). */
  skipped: string[];
}

/** Tags, lists, custom fields, companies, campaigns, funnels and funnel subscribers, as chosen. */
export async function verifyEntities(deps: VerifyDeps, streams: readonly string[]): Promise<EntityVerifyResult> {
  const { client } = deps;
  const diffs: Difference[] = [];
  const skipped: string[] = [];
  // `into` holds the stream's rows read before this listing: progress counts rows over the stream.
  const all = async <T>(stream: string, fetch: (page: number, perPage: number) => Promise<Page<T>>, into: T[] = [], listing?: VerifyProgress['listing']): Promise<T[]> => {
    for await (const p of client.paginate(fetch, { perPage: SMALL_PER_PAGE })) {
      into.push(...p.items);
      deps.onProgress?.({ stream, ...(listing ? { listing } : {}), pagesDone: p.currentPage, pagesTotal: p.lastPage, rows: into.length });
    }
    return into;
  };
  const compare = async (table: EntityTable, crmRows: readonly object[]) => {
    const held = await deps.read((w) => readEntityRows(w, table));
    diffs.push(...rowDifferences(entityStream(table), crmRows as Record<string, unknown>[], held));
  };

  if (streams.includes('tags')) await compare('tags', await client.tags.list());
  if (streams.includes('lists')) await compare('lists', await client.lists.list());
  if (streams.includes('custom_fields')) await compare('custom_fields', await client.customFields.list());
  if (streams.includes('companies')) {
    try {
      await compare('companies', await all('companies', (page, perPage) => client.companies.listPage({ page, perPage })));
    } catch (err) {
      // The companies module can be switched off on the CRM; the sync skips it the same way.
      if (!(err instanceof CrmsyncError && err.code === 'CRM_FORBIDDEN')) throw err;
      skipped.push(`companies: the CRM refuses the companies listing (${err.message})`);
    }
  }
  if (streams.includes('campaigns')) await compare('campaigns', await all('campaigns', (page, perPage) => client.campaigns.listPage({ page, perPage, withStats: true })));
  if (streams.includes('funnels') || streams.includes('funnel_subscribers')) {
    const funnels = await all('funnels', (page, perPage) => client.funnels.listPage({ page, perPage, withSubscribersCount: true }));
    if (streams.includes('funnels')) await compare('funnels', funnels);
    if (streams.includes('funnel_subscribers')) {
      const crmRows: object[] = [];
      // One listing per funnel: each one's pages start at 1 again, so progress names the funnel
      // (a page 2/2 after a page 1/1 read as a page past the last).
      for (const [i, f] of funnels.entries()) {
        const listing = { noun: 'funnel', done: i + 1, total: funnels.length };
        // No `status`: the interface reads it as "all", the real system filters by it literally.
        await all('funnel_subscribers', (page, perPage) => client.funnels.subscribersPage(f.id, { page, perPage }), crmRows, listing);
      }
      const held = await deps.read((w) => readFunnelSubscriberRows(w));
      diffs.push(...rowDifferences(FUNNEL_SUBSCRIBERS, crmRows as Record<string, unknown>[], held));
    }
  }
  return { diffs, skipped };
}
