import type { CrmClient } from '../../../src/crm/index.js';
import type { Fixture } from './fixtures.js';

/**
 * Which client call receives each capture of the site-ny folder (test/crm/site-ny-fixtures.test.ts),
 * and the captures of routes crmsync's client does not call, each with the reason.
 */
export interface Replay {
  call: (c: CrmClient) => Promise<unknown>;
  /** Query parameters of the capture that the client sends otherwise (why: beside each entry). */
  unlike?: string[];
}

const contactList = (file: string, q: Parameters<CrmClient['contacts']['listPage']>[0]): [string, Replay] => [file, { call: (c) => c.contacts.listPage(q) }];
/** The ranges the series captures asked for, up to the capture day: daily (30), weekly (75) and monthly (365) keys. */
const RANGE_START = { 30: '2026-10-27', 75: '2026-09-11', 365: '2025-11-26' } as const;
const seriesRange = (name: string, days: keyof typeof RANGE_START) => (c: CrmClient) => c.reports.get(name, { date_range: [RANGE_START[days], '2026-11-25'] });

/** The option fields of GET_reports_options_fields_sync_lookups.json. */
export const SYNC_LOOKUPS = ['tags', 'lists', 'statuses', 'editable_statuses', 'contact_types', 'custom_fields', 'campaigns', 'automation_funnels', 'companies'];

/** Each capture of a route the client calls, and the call crmsync makes that receives it. */
export const REPLAYS: Record<string, Replay> = Object.fromEntries<Replay>([
  // Contacts: listings as the scans ask for them (sync-contacts, verify with custom fields, the
  // max-id probe of finish-contacts-scan, the updated_at scan of sync-updated-contacts).
  contactList('GET_subscribers_no_custom_fields.json', { page: 1, perPage: 5, order: 'asc', orderBy: 'id' }),
  contactList('GET_subscribers_custom_fields_true.json', { page: 1, perPage: 5, order: 'asc', orderBy: 'id', customFields: true }),
  // The client sends no custom_fields for false; the README shows false and absent answer alike.
  ['GET_subscribers_custom_fields_false.json', { call: (c) => c.contacts.listPage({ page: 1, perPage: 5, order: 'asc', orderBy: 'id', customFields: false }), unlike: ['custom_fields'] }],
  contactList('GET_subscribers_sort_by_id_sort_type_desc_per_page_1.json', { page: 1, perPage: 1, order: 'desc', orderBy: 'id' }),
  contactList('GET_subscribers_sort_by_created_at_sort_type_asc.json', { page: 1, perPage: 5, order: 'asc', orderBy: 'created_at' }),
  contactList('GET_subscribers_sort_by_updated_at_sort_type_desc.json', { page: 1, perPage: 5, order: 'desc', orderBy: 'updated_at' }),
  contactList('GET_subscribers_sort_by_updated_at_sort_type_desc_after_tag_attach.json', { page: 1, perPage: 3, order: 'desc', orderBy: 'updated_at' }),
  // One contact: crmsync asks with[]=subscriber.custom_values; the other views as captured.
  ...['id', 'before_tag_attach', 'after_tag_attach', 'after_tag_detach', 'after_list_attach', 'after_list_detach', 'after_put_attach_tags', 'after_put_detach_tags'].map((v): [string, Replay] => [
    `GET_subscribers_${v === 'id' ? 'id' : `id_${v}`}.json`,
    { call: (c) => c.contacts.get(58) },
  ]),
  // The client has no custom_fields option for one contact: the capture shows it changes nothing.
  ['GET_subscribers_id_custom_fields_true.json', { call: (c) => c.contacts.get(58), unlike: ['custom_fields'] }],
  ['GET_subscribers_id_with_subscriber.custom_values.json', { call: (c) => c.contacts.get(58, { with: ['subscriber.custom_values'] }) }],
  ['GET_subscribers_id_with_stats.json', { call: (c) => c.contacts.get(58, { with: ['stats'] }) }],
  ['GET_subscribers_id_notes.json', { call: (c) => c.contacts.notes.listPage(58, { page: 1, perPage: 15 }) }],
  ['PUT_subscribers_id_attach_tags_only.json', { call: (c) => c.contacts.update(58, { attach_tags: [7] }) }],
  ['PUT_subscribers_id_detach_tags_only.json', { call: (c) => c.contacts.update(58, { detach_tags: [7] }) }],
  // Taxonomies read whole (the client pages by 500 and does not ask for all_tags).
  ['GET_tags_all_tags_true.json', { call: (c) => c.tags.list(), unlike: ['all_tags'] }],
  ['GET_tags_per_page_50.json', { call: (c) => c.tags.list(), unlike: ['per_page'] }],
  ['GET_lists.json', { call: (c) => c.lists.list() }],
  ['GET_custom-fields_contacts.json', { call: (c) => c.customFields.list() }],
  // Campaigns: the entity sync asks with[]=stats, the interface's report path without.
  ['GET_campaigns_with_stats.json', { call: (c) => c.campaigns.listPage({ page: 1, perPage: 15, withStats: true }) }],
  ['GET_campaigns.json', { call: (c) => c.campaigns.listPage({ page: 1, perPage: 15, withStats: false }) }],
  ['GET_campaigns_id.json', { call: (c) => c.campaigns.get(1) }],
  ['GET_campaigns_id_status.json', { call: (c) => c.campaigns.status(1) }],
  // Funnels and their subscribers.
  ['GET_funnels.json', { call: (c) => c.funnels.listPage({ page: 1, perPage: 15 }) }],
  ['GET_funnels_id.json', { call: (c) => c.funnels.get(1) }],
  ['GET_funnels_id2.json', { call: (c) => c.funnels.get(2) }],
  ['GET_funnels_id_subscribers.json', { call: (c) => c.funnels.subscribersPage(1, { page: 1, perPage: 15 }) }],
  ['GET_funnels_id2_subscribers.json', { call: (c) => c.funnels.subscribersPage(2, { page: 1, perPage: 15 }) }],
  ['GET_funnels_id_subscribers_per_page_2_page_2.json', { call: (c) => c.funnels.subscribersPage(1, { page: 2, perPage: 2 }) }],
  // The client sends no status for `all`: the captures show the real CRM answers status=all with no rows.
  ...(['active', 'completed', 'all'] as const).flatMap((status): Array<[string, Replay]> => [
    [`GET_funnels_id_subscribers_status_${status}.json`, { call: (c) => c.funnels.subscribersPage(1, { page: 1, perPage: 15, status }), unlike: status === 'all' ? ['status'] : [] }],
    [`GET_funnels_id2_subscribers_status_${status}.json`, { call: (c) => c.funnels.subscribersPage(2, { page: 1, perPage: 15, status }), unlike: status === 'all' ? ['status'] : [] }],
  ]),
  ['GET_funnels_id_subscribers_contact_id.json', { call: (c) => c.funnels.subscriber(1, 3040) }],
  ['GET_funnels_id_report.json', { call: (c) => c.reports.funnelReport(1) }],
  ['GET_funnels_id2_report.json', { call: (c) => c.reports.funnelReport(2) }],
  // Reports: the plugin's routes as snapshotReports asks for them, the interface's (404 here:
  // the probe falls back on NotFoundError.routeMissing), and the rest through reports.get.
  ['GET_reports_dashboard-stats.json', { call: (c) => c.reports.dashboardStats() }],
  ...(['subscribers', 'email-sents', 'email-opens', 'email-clicks'] as const).flatMap((name): Array<[string, Replay]> => [
    [`GET_reports_${name}.json`, { call: (c) => c.reports.series(name) }],
    ...([30, 365] as const).map((days): [string, Replay] => [`GET_reports_${name}_date_range_${days}_days.json`, { call: seriesRange(name, days) }]),
  ]),
  ['GET_reports_subscribers_date_range_75_days.json', { call: seriesRange('subscribers', 75) }],
  ['GET_reports_overview.json', { call: (c) => c.reports.overview() }],
  ['GET_reports_subscriber-growth.json', { call: (c) => c.reports.subscriberGrowth() }],
  ['GET_reports_top-subscribers.json', { call: (c) => c.reports.topSubscribers() }],
  ['GET_reports_campaigns_id_email-stats.json', { call: (c) => c.reports.campaignEmailStats(1) }],
  ['GET_reports_funnels_id_conversion-stats.json', { call: (c) => c.reports.funnelConversionStats(1) }],
  ['GET_reports_automations_id_steps.json', { call: (c) => c.reports.automationSteps(1) }],
  ['GET_reports_options_fields_sync_lookups.json', { call: (c) => c.reports.options(SYNC_LOOKUPS) }],
  // The client always names fields (the capture shows why): its request gets the same 422.
  ['GET_reports_options_no_fields.json', { call: (c) => c.reports.options(['statuses']) }],
  ['GET_reports_emails.json', { call: (c) => c.reports.get('emails') }],
  ['GET_reports_emails_page_1_per_page_5.json', { call: (c) => c.reports.get('emails', { page: 1, per_page: 5 }) }],
  ['GET_reports_ajax-options.json', { call: (c) => c.reports.get('ajax-options') }],
  ['GET_reports_ajax-options_option_key_tags.json', { call: (c) => c.reports.get('ajax-options', { option_key: 'tags' }) }],
  ...['ping', 'cascade_selections', 'advanced-providers', 'taxonomy-terms'].map((r): [string, Replay] => [`GET_reports_${r}.json`, { call: (c) => c.reports.get(r) }]),
  ['GET_webhooks.json', { call: (c) => c.webhooks.list() }],
]);

/** Captures of routes crmsync's client does not call: only checked to be JSON. */
export const NOT_CLIENT: Record<string, string> = {
  'GET_campaigns_id_contacts-by-segment_per_page_5.json': 'campaign analytics for the UI',
  'GET_campaigns_id_emails_per_page_5.json': 'campaign analytics for the UI',
  'GET_campaigns_id_emails_filter_type_click_per_page_5.json': 'campaign analytics for the UI',
  'GET_campaigns_id_estimated-recipients-count.json': 'campaign analytics for the UI',
  'GET_campaigns_id_link-report.json': 'campaign analytics for the UI',
  'GET_campaigns_id_overview_stats.json': 'campaign analytics for the UI (campaigns.status has the same counts)',
  'GET_campaigns_id_revenues.json': 'campaign analytics for the UI',
  'GET_campaigns_id_unsubscribers.json': 'campaign analytics for the UI',
  'GET_funnels_all-activities.json': 'automation activity log, not synced',
  'GET_funnels_all-activities_status_completed_per_page_2.json': 'automation activity log, not synced',
  'GET_funnels_id_email_reports.json': 'funnel email report, not synced',
  'GET_funnels_id_syncable-counts.json': 'funnel admin helper',
  'GET_funnels_subscriber_id_automations.json': "a contact's automations for the UI",
  'GET_subscribers_id_emails.json': "a contact's UI tabs",
  'GET_subscribers_id_form-submissions.json': "a contact's UI tabs",
  'GET_subscribers_id_info-widgets.json': "a contact's UI tabs",
  'GET_subscribers_id_purchase-history.json': "a contact's UI tabs",
  'GET_subscribers_id_support-tickets.json': "a contact's UI tabs",
  'GET_subscribers_id_tracking-events.json': "a contact's UI tabs",
  'GET_subscribers_id_url-metrics.json': "a contact's UI tabs",
  'GET_webhooks_id.json': 'the route does not exist (404 rest_no_route); the client lists webhooks instead',
  'POST_subscribers_sync-segments_attach_list.json': 'membership writes go through PUT /subscribers/{id}',
  'POST_subscribers_sync-segments_attach_tag.json': 'membership writes go through PUT /subscribers/{id}',
  'POST_subscribers_sync-segments_detach_list.json': 'membership writes go through PUT /subscribers/{id}',
  'POST_subscribers_sync-segments_detach_tag.json': 'membership writes go through PUT /subscribers/{id}',
};

/** What a capture's query asked that the client's request does not (case aside: the server reads `asc` and `ASC` alike). */
export function queryDifferences(f: Fixture, sent: string, unlike: readonly string[]): string[] {
  const want = new URLSearchParams(f.request.query_string ?? '');
  const got = new URL(sent, 'http://x').searchParams;
  const out: string[] = [];
  for (const key of new Set(want.keys())) {
    if (unlike.includes(key)) continue;
    const w = want.getAll(key).map((v) => v.toLowerCase());
    const g = got.getAll(key).map((v) => v.toLowerCase());
    if (JSON.stringify(w) !== JSON.stringify(g)) out.push(`${key}: captured ${JSON.stringify(w)}, sent ${JSON.stringify(g)}`);
  }
  return out;
}
