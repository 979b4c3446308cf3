import type { CrmClient } from '../crm/index.js';
import type { TaxonomyRef } from '../crm/types.js';
import type { PushCrm } from './push-crm.js';

const ref = (t: TaxonomyRef): TaxonomyRef => ({ id: t.id, title: t.title, slug: t.slug });

/** The pusher's view of the shared client: every call goes through the client's rate limiter. */
export function pushCrmFromClient(client: CrmClient): PushCrm {
  return {
    listCustomFields: () => client.customFields.list(),
    listTags: async () => (await client.tags.list({ excludeCounts: true })).map(ref),
    listLists: async () => (await client.lists.list({ excludeCounts: true })).map(ref),
    createTag: async (title) => ref(await client.tags.create({ title })),
    createList: async (title) => ref(await client.lists.create({ title })),
    upsertContact: (body) => client.contacts.upsert(body),
  };
}
