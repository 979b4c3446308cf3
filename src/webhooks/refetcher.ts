import type { Campaign, Contact, Funnel, FunnelSubscriber } from '../crm/types.js';

/**
 * What the applier reads back from the CRM when a payload is partial. `null` means the record no
 * longer exists (deleted); any other failure is thrown as the client's error (with `retryable`).
 */
export interface WebhookRefetcher {
  contact(id: number): Promise<Contact | null>;
  campaign(id: number): Promise<Campaign | null>;
  funnel(id: number): Promise<Funnel | null>;
  funnelSubscriber(funnelId: number, contactId: number): Promise<FunnelSubscriber | null>;
}
