import type { CrmClient } from '../crm/index.js';
import { CONTACT_WITH_CUSTOM_VALUES } from '../sync/contact-requests.js';
import type { WebhookRefetcher } from './refetcher.js';

/** The applier's refetches through the CRM client (its limiter paces them; not found is null). */
export function createClientRefetcher(client: Pick<CrmClient, 'contacts' | 'campaigns' | 'funnels'>): WebhookRefetcher {
  return {
    contact: (id) => client.contacts.get(id, CONTACT_WITH_CUSTOM_VALUES),
    campaign: (id) => client.campaigns.get(id),
    funnel: (id) => client.funnels.get(id),
    funnelSubscriber: async (funnelId, contactId) => (await client.funnels.subscriber(funnelId, contactId))?.subscriber ?? null,
  };
}
