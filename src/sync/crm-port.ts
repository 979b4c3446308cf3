import type { PaginateOptions } from '../crm/paginate.js';
import type { Campaign, Company, Contact, CustomField, Funnel, FunnelSubscriber, List, Page, RawPage, ReportSnapshot, Tag } from '../crm/types.js';

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
      /** Ask for custom values (`custom_fields=true`; without it the real CRM leaves them out). */
      customFields?: boolean;
    }): Promise<Page<Contact>>;
    /**
     * The same page unparsed, for the warehouse to parse: ids and paginator numbers read by a scan
     * of the body (and each row's normalized `updated_at` with `read.updatedAt`).
     */
    listPageRaw(
      opts: { page: number; perPage: number; order: 'asc' | 'desc'; orderBy: 'id' | 'updated_at'; tags?: number[]; lists?: number[]; customFields?: boolean },
      read?: { updatedAt?: boolean },
    ): Promise<RawPage>;
    /** `with: ['subscriber.custom_values']` asks for custom values (the real CRM sends them only then). */
    get(id: number, opts?: { with?: string[] }): Promise<Contact | null>;
  };
  tags: { list(): Promise<Tag[]> };
  lists: { list(): Promise<List[]> };
  companies: { listPage(opts: { page: number; perPage: number }): Promise<Page<Company>> };
  customFields: { list(): Promise<CustomField[]> };
  campaigns: { listPage(opts: { page: number; perPage: number; withStats: boolean }): Promise<Page<Campaign>> };
  funnels: {
    listPage(opts: { page: number; perPage: number; withSubscribersCount?: boolean }): Promise<Page<Funnel>>;
    /** Send no status for every subscriber: the real CRM filters `status=all` literally and returns none. */
    subscribersPage(funnelId: number, opts: { page: number; perPage: number; status?: 'all' }): Promise<Page<FunnelSubscriber>>;
  };
  reports: {
    overview(): Promise<ReportSnapshot>;
    subscriberGrowth(): Promise<ReportSnapshot>;
    campaignEmailStats(campaignId: number): Promise<ReportSnapshot>;
    funnelConversionStats(funnelId: number): Promise<ReportSnapshot>;
    automationSteps(funnelId: number): Promise<ReportSnapshot>;
    dashboardStats(): Promise<ReportSnapshot>;
    series(name: 'subscribers' | 'email-sents' | 'email-opens' | 'email-clicks'): Promise<ReportSnapshot>;
    funnelReport(funnelId: number): Promise<ReportSnapshot>;
  };
  verifyCredentials(): Promise<unknown>;
  /** The one paginator: every page loop of the activities goes through it. */
  paginate<T, P extends Page<T> = Page<T>>(fetchPage: (page: number, perPage: number) => Promise<P & Page<T>>, opts: PaginateOptions<T>): AsyncIterable<P>;
  /** A view whose requests (and scans) the signal aborts: an activity's cancellation signal. */
  withSignal(signal: AbortSignal): SyncCrmClient;
}
