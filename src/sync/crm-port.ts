import type { Campaign, Company, Contact, CustomField, Funnel, FunnelSubscriber, List, Page, ReportSnapshot, Tag } from '../crm/types.js';

/**
 * The part of the CRM client (src/crm) that sync activities use. Declared here, structurally, so
 * that activities and tests depend on what they call rather than on the whole client.
 */
export interface SyncCrmClient {
  contacts: {
    listPage(opts: {
      page: number;
      perPage: number;
      order: 'asc' | 'desc';
      orderBy: 'id' | 'updated_at';
      tags?: number[];
      lists?: number[];
      customFields?: boolean;
    }): Promise<Page<Contact>>;
    get(id: number, opts?: { with?: string[] }): Promise<Contact | null>;
  };
  tags: { list(): Promise<Tag[]> };
  lists: { list(): Promise<List[]> };
  companies: { listPage(opts: { page: number; perPage: number }): Promise<Page<Company>> };
  customFields: { list(): Promise<CustomField[]> };
  campaigns: { listPage(opts: { page: number; perPage: number; withStats: boolean }): Promise<Page<Campaign>> };
  funnels: {
    listPage(opts: { page: number; perPage: number }): Promise<Page<Funnel>>;
    subscribersPage(funnelId: number, opts: { status: 'all'; page: number; perPage: number }): Promise<Page<FunnelSubscriber>>;
  };
  reports: {
    overview(): Promise<ReportSnapshot>;
    subscriberGrowth(): Promise<ReportSnapshot>;
    campaignEmailStats(campaignId: number): Promise<ReportSnapshot>;
    funnelConversionStats(funnelId: number): Promise<ReportSnapshot>;
    automationSteps(funnelId: number): Promise<ReportSnapshot>;
  };
  verifyCredentials(): Promise<unknown>;
}
