import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CAPABILITIES, type RunningSimulator, type TruthContact } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay, routeOf, withoutBench, type Capture } from './capture-replay.js';
import { api, withSim, type Api, type Json } from './helpers.js';
import { shapeDiff } from './shape.js';

// The captures of fixtures/fluentcrm-2.9 (UTC site) and its site-ny folder (America/New_York)
// that test/simulator/real-mode.test.ts, real-streams.test.ts and freshness-facts.test.ts do not
// already replay, on routes real mode serves (docs/simulator.md lists those it does not), sent
// to the simulator in real mode: same status and content type, the same body for errors, the
// captured shape for successes, and the behaviour each README describes.

// Keys of the plugin the simulator does not model: the campaign editor's design and template
// list, and the funnel editor's trigger and form descriptions (admin UI, no CRM data).
const UNMODELLED = new Set(['template_config', 'templates', 'trigger', 'settingsFields', 'conditionFields']);

// Funnel steps differ between the captured sites' data and the simulator's: their settings are
// compared action by action in the New York tests below.
const STEPS = new Set([...UNMODELLED, 'last_sequence', 'next_sequence_item', 'actions', 'sequences']);

const ADMIN = { username: 'admin', password: 'captured-admin-password-1' };
const EDITOR = { username: 'editor1', password: 'captured-editor-password-1' };
/** WordPress's editor role has none of FluentCRM's capabilities: 403 on every route. */
const USERS = [
  { ...ADMIN, capabilities: [...ALL_CAPABILITIES] },
  { ...EDITOR, capabilities: [] },
];

const ids = (rows: Json[]): number[] => rows.map((r) => r.id as number);
const rowsOf = (r: { json: Json }): Json[] => r.json.subscribers.data as Json[];

describe('real mode against the UTC site captures (fixtures/fluentcrm-2.9)', () => {
  let sim: RunningSimulator;
  let call: Api;
  let truth: () => TruthContact[];
  const run = async (name: string, o: Parameters<typeof replay>[2] = {}): Promise<{ c: Capture; r: Awaited<ReturnType<typeof replay>> }> => {
    const c = loadCapture(name);
    return { c, r: await replay(sim, c, o) };
  };

  beforeAll(async () => {
    // The server clock of the capture run (GET_campaigns_id_status: 2026-11-21 04:56:58, UTC site).
    ({ sim, call } = await withSim({ contacts: 80, seed: 4, mode: 'real', credentials: ADMIN, users: USERS, now: () => Date.parse('2026-11-21T04:57:00Z') }));
    truth = () => sim.truth().contacts;
  });
  afterAll(async () => {
    await sim.close();
  });

  it('read routes replayed as captured have the captured status, type and shape', async () => {
    const draft = sim.truth().campaigns.find((x) => x.status === 'draft')?.id as number;
    // The captured contact 1 is unsubscribed, which adds unsubscribe_reason/_date to its view.
    const unsubscribed = truth().find((c) => c.status === 'unsubscribed')?.id as number;
    const inFunnel = sim.truth().funnelSubscribers[0]?.subscriberId as number;
    const cases: [string, string?][] = [
      ['GET_subscribers'],
      ['GET_subscribers_order_by_id_order_type_ASC'],
      ['GET_subscribers_page_0_per_page_2'],
      ['GET_subscribers_page_-1_per_page_2'],
      ['GET_subscribers_per_page_1000'],
      ['GET_subscribers_per_page_abc'],
      ['GET_subscribers_no_accept_header_per_page_0'],
      ['GET_subscribers_search_empty'],
      ['GET_subscribers_search_lovelace', '/subscribers?search=liskov'],
      ['GET_subscribers_search_no_match'],
      ['GET_subscribers_sort_by_bogus'],
      ['GET_subscribers_sort_by_bogus_sort_type_ASC'],
      ['GET_subscribers_sort_by_email_sort_type_ASC_per_page_3'],
      ['GET_subscribers_sort_by_id_sort_type_ASC'],
      ['GET_subscribers_sort_by_id_sort_type_asc_lowercase_per_page_3'],
      ['GET_subscribers_statuses_bogus'],
      ['GET_subscribers_statuses_pending_bounced'],
      ['GET_subscribers_statuses_subscribed'],
      ['GET_subscribers_tags_1'],
      ['GET_subscribers_lists_2'],
      ['GET_subscribers_company_ids'],
      ['GET_subscribers_id', `/subscribers/${unsubscribed}`],
      ['GET_subscribers_999999_notes'],
      ['GET_tags_exclude_counts'],
      ['GET_tags_id'],
      ['GET_tags_per_page_2_page_2'],
      ['GET_tags_search_vip'],
      ['GET_tags_sort_by_title_sort_order_ASC'],
      ['GET_lists_999999'],
      ['GET_lists_id'],
      ['GET_lists_per_page_2_page_2'],
      ['GET_lists_sort_by_title_sort_order_ASC'],
      ['GET_campaigns'],
      ['GET_campaigns_id', `/campaigns/${draft}`],
      ['GET_campaigns_id_status', `/campaigns/${draft}/status`],
      ['GET_campaigns_id_emails', `/campaigns/${draft}/emails`],
      ['GET_campaigns_999999_status'],
      ['GET_companies_id'],
      ['GET_funnels_id'],
      ['GET_funnels_id_subscribers_with_funnel_sequences'],
      ['GET_funnels_subscriber_id_automations', `/funnels/subscriber/${inFunnel}/automations`],
      ['GET_reports_dashboard-stats'],
      ['GET_reports_subscribers'],
      ['GET_reports_email-sents'],
      ['GET_reports_email-opens'],
      ['GET_reports_email-clicks'],
      ['GET_reports_subscribers_date_range'],
      ['GET_reports_subscribers_date_range_monthly'],
      ['GET_reports_subscribers_bad_date'],
      ['GET_reports_options_fields_tags_lists_statuses'],
      ['GET_reports_advanced-providers'],
      ['GET_reports_ajax-options_tags'],
      ['GET_reports_cascade_selections_no_params'],
      ['GET_reports_taxonomy-terms_no_params'],
    ];
    for (const [name, path] of cases) {
      const { c, r } = await run(name, path ? { path } : {});
      expectLike(c, r, name.includes('funnels') ? STEPS : UNMODELLED);
    }
  });

  it('per_page has no cap; page 0 and -1 are page 1; page past the end is empty (pagination edge cases)', async () => {
    const all = truth().map((c) => c.id);
    const big = await run('GET_subscribers_per_page_1000');
    expect(big.r.json.subscribers).toMatchObject({ per_page: 1000, total: all.length, last_page: 1, from: 1, to: all.length });
    expect(big.c.body.subscribers.per_page).toBe(1000);
    for (const name of ['GET_subscribers_page_0_per_page_2', 'GET_subscribers_page_-1_per_page_2']) {
      const { c, r } = await run(name);
      expect(r.json.subscribers).toMatchObject({ current_page: 1, from: 1, to: 2, prev_page_url: null, next_page_url: c.body.subscribers.next_page_url });
      expect(ids(rowsOf(r))).toEqual(all.slice(-2).reverse());
    }
    expect((await run('GET_subscribers')).r.json.subscribers).toMatchObject({ per_page: 15, next_page_url: '/wp-json/fluent-crm/v2/subscribers?page=2' });
  });

  it('order_by/order_type are ignored; sort_by/sort_type honoured in either case; sort_by=bogus is table order', async () => {
    const all = truth().map((c) => c.id);
    expect(ids(rowsOf((await run('GET_subscribers_order_by_id_order_type_ASC')).r))).toEqual(all.slice(-15).reverse());
    expect(ids(rowsOf((await run('GET_subscribers_sort_by_id_sort_type_ASC')).r))).toEqual(all.slice(0, 15));
    expect(ids(rowsOf((await run('GET_subscribers_sort_by_id_sort_type_asc_lowercase_per_page_3')).r))).toEqual(all.slice(0, 3));
    for (const name of ['GET_subscribers_sort_by_bogus', 'GET_subscribers_sort_by_bogus_sort_type_ASC']) {
      const { c, r } = await run(name);
      expect(ids(c.body.subscribers.data)).toEqual([1, 2, 3, 4, 5]); // the capture: ids ascending
      expect(ids(rowsOf(r))).toEqual(all.slice(0, 5));
    }
    const emails = rowsOf((await run('GET_subscribers_sort_by_email_sort_type_ASC_per_page_3')).r).map((x) => x.email as string);
    expect(emails).toEqual(
      truth()
        .map((c) => c.email)
        .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1))
        .slice(0, 3),
    );
  });

  it('statuses[], tags[], lists[], company_ids[] and search filter; statuses[]=bogus is ignored', async () => {
    const count = (f: (c: TruthContact) => boolean): number => truth().filter(f).length;
    expect((await run('GET_subscribers_statuses_bogus')).r.json.subscribers.total).toBe(truth().length);
    const pb = await run('GET_subscribers_statuses_pending_bounced');
    expect(pb.r.json.subscribers.total).toBe(count((c) => c.status === 'pending' || c.status === 'bounced'));
    expect(new Set(rowsOf(pb.r).map((x) => x.status))).toEqual(new Set(['pending', 'bounced']));
    expect((await run('GET_subscribers_statuses_subscribed')).r.json.subscribers.total).toBe(count((c) => c.status === 'subscribed'));
    expect((await run('GET_subscribers_tags_1')).r.json.subscribers.total).toBe(count((c) => c.tags.includes(1)));
    expect((await run('GET_subscribers_lists_2')).r.json.subscribers.total).toBe(count((c) => c.lists.includes(2)));
    expect((await run('GET_subscribers_company_ids')).r.json.subscribers.total).toBe(count((c) => c.company_ids.includes(1)));
    const found = await run('GET_subscribers_search_lovelace', { path: '/subscribers?search=liskov' });
    expect(found.r.json.subscribers.total).toBe(count((c) => `${c.first_name} ${c.last_name} ${c.email}`.toLowerCase().includes('liskov')));
    expect(found.r.json.subscribers.total).toBeGreaterThan(0);
    expect(ids(rowsOf(found.r))).toEqual([...ids(rowsOf(found.r))].sort((a, b) => b - a)); // newest first, as captured (41, 21, 1)
    expect((await run('GET_subscribers_search_empty')).r.json.subscribers.total).toBe(truth().length);
    const none = await run('GET_subscribers_search_no_match');
    expect(none.r.json.subscribers).toEqual(none.c.body.subscribers);
  });

  it('lookups: get_by_email ignores case; notes of an unknown contact are an empty page with the note form; the single view has no `company`', async () => {
    const target = truth().find((c) => c.status === 'unsubscribed') as TruthContact; // as the captured contact
    const upper = await run('GET_subscribers_0_get_by_email_uppercase', { path: `/subscribers/0?get_by_email=${encodeURIComponent(target.email.toUpperCase())}` });
    expectLike(upper.c, upper.r, UNMODELLED);
    expect(upper.r.json.subscriber.id).toBe(target.id);
    const notes = await run('GET_subscribers_999999_notes');
    expect(withoutBench(notes.r.json)).toEqual(withoutBench(notes.c.body));
    const one = await run('GET_subscribers_id', { path: `/subscribers/${target.id}` });
    expect(Object.keys(one.r.json.subscriber)).not.toContain('company');
    expect(Object.keys(one.c.body.subscriber)).not.toContain('company');
    expect(Object.keys(rowsOf(await call('GET', '/subscribers?per_page=1'))[0])).toContain('company');
  });

  it('contact writes as captured: force-update rules, form bodies, method overrides, unknown status, names for tags', async () => {
    const c2 = truth().find((c) => c.id === 2) as TruthContact;
    const email = c2.email;
    const sub = async (name: string, body: Record<string, unknown>): Promise<Json> => {
      const { c, r } = await run(name, { body });
      expectLike(c, r, UNMODELLED);
      return r.json;
    };
    expect((await sub('POST_subscribers_force_update_yes', { email, first_name: 'Updated', city: 'Porto', status: 'subscribed', tags: [3], __force_update: 'yes' })).action_type).toBe('updated');
    expect((await sub('POST_subscribers_force_update_true_json_bool', { email, first_name: 'UpdatedBool', status: 'subscribed', __force_update: true })).contact.first_name).toBe('UpdatedBool');
    await sub('POST_subscribers_force_update_string_true', { email, first_name: 'X', status: 'subscribed', __force_update: 'true' });
    await sub('POST_subscribers_force_update_int_1', { email, first_name: 'X', status: 'subscribed', __force_update: 1 });
    const q = await run('POST_subscribers_force_update_yes_query_param', { body: { email, first_name: 'UpdatedQuery', status: 'subscribed' } });
    expectLike(q.c, q.r, UNMODELLED);
    expect(q.r.json).toMatchObject({ action_type: 'updated', contact: { first_name: 'UpdatedQuery' } });
    // Empty strings do not blank a field; tags are added, not replaced; subscribed does not go back to pending.
    expect((await sub('POST_subscribers_force_update_empty_first_name', { email, first_name: '', status: 'subscribed', __force_update: 'yes' })).contact.first_name).toBe('UpdatedQuery');
    const tagged = await sub('POST_subscribers_force_update_tags_additive', { email, status: 'subscribed', tags: [5], __force_update: 'yes' });
    expect(ids(tagged.contact.tags)).toEqual(expect.arrayContaining([3, 5]));
    expect((await sub('POST_subscribers_force_update_subscribed_to_pending', { email, status: 'pending', __force_update: 'yes' })).contact.status).toBe('subscribed');
    const bounced = truth().find((c) => c.status === 'bounced') as TruthContact;
    expect((await sub('POST_subscribers_force_update_bounced_to_subscribed', { email: bounced.email, status: 'subscribed', __force_update: 'yes' })).contact.status).toBe('subscribed');
    expect((await sub('POST_subscribers_force_update_yes_new_email', { email: 'brand.new.force@example.test', first_name: 'Brand', status: 'subscribed', __force_update: 'yes' })).action_type).toBe(
      'created',
    );
    await sub('POST_subscribers_missing_status_force_update', { email, __force_update: 'yes' });
    await sub('POST_subscribers_duplicate_email_different_case', { email: email.toUpperCase(), first_name: 'Dup', status: 'subscribed' });
    expect((await sub('POST_subscribers_unknown_status', { email: 'typo.status@example.test', status: 'subscirbed' })).contact.status).toBe('subscribed');
    const form = await run('POST_subscribers_form_encoded');
    expectLike(form.c, form.r, UNMODELLED);
    expect(form.r.json.contact).toMatchObject({ email: 'form.encoded@example.test', status: 'pending' });
    expect(ids(form.r.json.contact.tags)).toEqual([1]);
    // Tags and lists by slug or title; an unknown custom field is dropped.
    const named = await sub('POST_subscribers_with_custom_values_and_names', {
      email: 'custom.values@example.test',
      first_name: 'Custom',
      status: 'subscribed',
      custom_values: { favorite_color: 'Blue', membership_number: '4242', not_a_field: 'x' },
      tags: ['vip', 'Newsletter Reader'],
      lists: ['prospects'],
    });
    expect(ids(named.contact.tags).sort()).toEqual([1, 2]);
    const stored = await call('GET', `/subscribers/${named.contact.id}?with[]=subscriber.custom_values`);
    expect(stored.json.subscriber.custom_values).toEqual({ favorite_color: 'Blue', membership_number: '4242' });
    expect(ids(stored.json.subscriber.lists)).toEqual([2]);

    const put = await run('POST_subscribers_id_method_override_PUT', { path: '/subscribers/2' });
    expectLike(put.c, put.r, UNMODELLED);
    expect(put.r.json.contact.first_name).toBe('Overridden');
    const viaQuery = await run('POST_subscribers_id_query_method_PUT', { path: '/subscribers/2?_method=PUT' });
    expectLike(viaQuery.c, viaQuery.r, UNMODELLED);
    expect(viaQuery.r.json.contact.first_name).toBe('QueryMethod');
    const wrapped = await run('PUT_subscribers_id_subscriber_object', { path: '/subscribers/2', body: { subscriber: { first_name: 'Wrapped', last_name: 'Object', email, status: 'subscribed' } } });
    expectLike(wrapped.c, wrapped.r, UNMODELLED);
    expect(wrapped.r.json.contact.first_name).toBe('Wrapped');
    const moved = await run('PUT_subscribers_id_detach_tags_attach_lists', { path: '/subscribers/2' });
    expectLike(moved.c, moved.r, UNMODELLED);
    expect(ids(moved.r.json.contact.lists)).toContain(3);
    expect(ids(moved.r.json.contact.tags)).not.toContain(3);
    const unsub = await run('PUT_subscribers_id_status_unsubscribed', { path: '/subscribers/16' });
    expectLike(unsub.c, unsub.r, UNMODELLED);
    expect(unsub.r.json.contact.status).toBe('unsubscribed');

    const victim = truth().at(-1)?.id as number;
    const del = await run('POST_subscribers_id_method_override_DELETE', { path: `/subscribers/${victim}` });
    expectLike(del.c, del.r, UNMODELLED);
    const gone = await run('GET_subscribers_id_after_delete', { path: `/subscribers/${victim}` });
    expectLike(gone.c, gone.r);
    const other = truth().at(-1)?.id as number;
    expectLike(loadCapture('DELETE_subscribers_id'), await replay(sim, loadCapture('DELETE_subscribers_id'), { path: `/subscribers/${other}` }));
  });

  it('an editor gets 403 rest_forbidden on every route, ping included; an unknown user 401; an unknown route 404 without auth', async () => {
    for (const name of ['GET_subscribers_non_admin_editor', 'POST_subscribers_non_admin_editor', 'GET_reports_ping_non_admin_editor']) {
      const { c, r } = await run(name, { who: EDITOR });
      expectLike(c, r);
    }
    const unknown = await run('GET_subscribers_unknown_user', { who: { username: 'nobody', password: 'not-a-password-at-all' } });
    expectLike(unknown.c, unknown.r);
    const anon = await run('GET_unknown_route_no_auth', { who: null });
    expectLike(anon.c, anon.r);
  });

  it('tags and lists: counts, paging, search and title order as captured', async () => {
    expect((await run('GET_tags_exclude_counts')).r.json.tags.data.every((t: Json) => !('subscribersCount' in t))).toBe(true);
    const tags = sim.truth().tags;
    const paged = await run('GET_tags_per_page_2_page_2');
    expect(paged.r.json.tags).toMatchObject({ total: tags.length, per_page: 2, current_page: 2, from: 3, to: 4, prev_page_url: paged.c.body.tags.prev_page_url });
    expect(ids(paged.r.json.tags.data)).toEqual(
      ids(tags)
        .sort((a, b) => b - a)
        .slice(2, 4),
    );
    expect(ids((await run('GET_tags_search_vip')).r.json.tags.data)).toEqual([1]);
    const byTitle = (await run('GET_tags_sort_by_title_sort_order_ASC')).r.json.tags.data.map((t: Json) => t.title);
    expect(byTitle).toEqual([...byTitle].sort((a: string, b: string) => a.localeCompare(b)));

    const lists = await run('GET_lists_per_page_2_page_2');
    expect(lists.r.json).toEqual({ lists: expect.any(Array), pagination: { total: sim.truth().lists.length } });
    expect(ids(lists.r.json.lists)).toEqual([3, 2]); // ids 5, 4 | 3, 2 | 1 (the capture: 3 lists, page 2 held list 1)
    expect(lists.c.body.pagination.total).toBe(3);
    expect(ids(lists.c.body.lists)).toEqual([1]);
    const listTitles = (await run('GET_lists_sort_by_title_sort_order_ASC')).r.json.lists.map((l: Json) => l.title);
    expect(listTitles).toEqual([...listTitles].sort((a: string, b: string) => a.localeCompare(b)));
    const one = await run('GET_lists_id');
    expect(Object.keys(one.r.json).sort()).toEqual(Object.keys(one.c.body).sort()); // the bare row: no member counts
  });

  it('tag and list writes answer as captured', async () => {
    const tag = await run('POST_tags_temp');
    expectLike(tag.c, tag.r);
    expect(tag.r.json.lists).toEqual(tag.r.json.item);
    const list = await run('POST_lists_temp');
    expectLike(list.c, list.r);
    const fresh = await run('POST_lists', { body: { title: 'Paying Partners', description: 'x' } });
    expectLike(fresh.c, fresh.r);
    const freshTag = await run('POST_tags', { body: { title: 'High Value', description: 'x' } });
    expectLike(freshTag.c, freshTag.r);
    const putList = await run('PUT_lists_id', { path: `/lists/${list.r.json.item.id}` });
    expectLike(putList.c, putList.r);
    expect(putList.r.json).toEqual(putList.c.body);
    const delTag = await run('DELETE_tags_id', { path: `/tags/${tag.r.json.item.id}` });
    expectLike(delTag.c, delTag.r);
    const delList = await run('DELETE_lists_id', { path: `/lists/${list.r.json.item.id}` });
    expectLike(delList.c, delList.r);
    expect(delList.r.json).toEqual(delList.c.body);
  });

  it('a draft campaign: status without stats or analytics, sent_by false, the site clock; emails with failed_counts', async () => {
    const draft = sim.truth().campaigns.find((x) => x.status === 'draft')?.id as number;
    const { c, r } = await run('GET_campaigns_id_status', { path: `/campaigns/${draft}/status` });
    expect(r.json).toMatchObject({ current_timestamp: '2026-11-21 04:57:00', stat: c.body.stat, analytics: c.body.analytics, sent_count: 0 });
    expect(r.json.campaign.sent_by).toBe(false);
    const emails = await run('GET_campaigns_id_emails', { path: `/campaigns/${draft}/emails` });
    expect(withoutBench(emails.r.json)).toEqual(withoutBench(emails.c.body));
    expect((await run('GET_campaigns')).r.json.campaigns.per_page).toBe(15);
  });

  it('companies: create, attach (contacts gain the company), and the module switch', async () => {
    const created = await run('POST_companies', { body: { name: 'Hooli Analytics', industry: 'Software', type: 'Customer', employees_number: 120 } });
    expectLike(created.c, created.r);
    const id = created.r.json.company.id as number;
    const attached = await run('POST_companies_attach-subscribers', { body: { subscriber_ids: [1, 2, 3], company_ids: [id] } });
    expectLike(attached.c, attached.r);
    expect(ids(attached.r.json.companies)).toEqual([id]);
    expect(ids((await call('GET', '/subscribers/3')).json.subscriber.companies)).toContain(id);

    const { sim: off, call: offCall } = await withSim({ contacts: 5, mode: 'real', companyModule: false });
    try {
      const denied = await replay(off, loadCapture('GET_companies_module_disabled'));
      expectLike(loadCapture('GET_companies_module_disabled'), denied);
      const row = (await offCall('GET', '/subscribers?per_page=1')).json.subscribers.data[0];
      expect('company' in row || 'companies' in row).toBe(false);
      const enable = loadCapture('POST_setting_experiments_enable_companies');
      const on = await replay(off, enable);
      expectLike(enable, on);
      expect(on.json.message).toBe(enable.body.message);
      expectLike(loadCapture('GET_companies'), await offCall('GET', '/companies'), UNMODELLED);
    } finally {
      await off.close();
    }
  });

  it("funnel writes on the plugin's routes (its route index): PUT /funnels/{id} sets the status, DELETE /funnels/{id}/subscribers removes the contacts named", async () => {
    const f = sim.truth().funnels.find((x) => x.status === 'published')!;
    const put = await call('PUT', `/funnels/${f.id}`, { status: 'paused' });
    expect([put.status, put.json.message, sim.truth().funnels.find((x) => x.id === f.id)?.status]).toEqual([200, 'Status has been updated to paused', 'paused']);
    const runs = sim.truth().funnelSubscribers.filter((x) => x.funnelId === f.id);
    const [a, b] = [runs[0]!.subscriberId, runs[1]!.subscriberId];
    const del = await call('DELETE', `/funnels/${f.id}/subscribers?subscriber_ids[]=${a}&subscriber_ids[]=${b}&subscriber_ids[]=999999`);
    expect(del.status).toBe(200);
    const left = sim.truth().funnelSubscribers.filter((x) => x.funnelId === f.id);
    expect([left.length, left.some((x) => x.subscriberId === a || x.subscriberId === b)]).toEqual([runs.length - 2, false]);
    expect((await call('DELETE', `/funnels/${f.id}/subscribers`)).status).toBe(423);
    expect((await call('DELETE', '/funnels/999999/subscribers?subscriber_ids[]=1')).json).toEqual({ message: 'No query results for model [FluentCrm\\App\\Models\\Funnel].' });
  });

  it('report series: 31 days to today by default, the end day excluded, whole-year ranges monthly', async () => {
    for (const name of [
      'GET_reports_subscribers',
      'GET_reports_email-sents',
      'GET_reports_email-opens',
      'GET_reports_email-clicks',
      'GET_reports_subscribers_date_range',
      'GET_reports_subscribers_date_range_monthly',
    ]) {
      const { c, r } = await run(name);
      expect([name, Object.keys(r.json.stats as object)]).toEqual([name, Object.keys(c.body.stats as object)]);
      expect(Object.values(r.json.stats as object).every((v) => Number.isInteger(v))).toBe(true);
    }
    const dash = await run('GET_reports_dashboard-stats');
    expect(dash.r.json.stats.total_subscribers.count).toBe(truth().filter((c) => c.status === 'subscribed').length);
  });

  it('reports/options lists what was asked, in that order, sorted and labelled as captured; helper routes answer as captured', async () => {
    const { c, r } = await run('GET_reports_options_fields_tags_lists_statuses');
    expect(Object.keys(r.json.options)).toEqual(Object.keys(c.body.options));
    for (const k of ['statuses', 'editable_statuses', 'contact_types']) expect(r.json.options[k]).toEqual(c.body.options[k]);
    const titles = r.json.options.tags.map((t: Json) => t.title);
    expect(titles).toEqual([...titles].sort((a: string, b: string) => a.localeCompare(b)));
    expect(ids(r.json.options.companies)).toEqual(ids(r.json.options.companies).sort((a, b) => b - a));
    expect(r.json.options.automation_funnels[0].title).toMatch(/ \((published|paused|draft)\)$/);
    for (const name of ['GET_reports_advanced-providers', 'GET_reports_ajax-options_tags', 'GET_reports_cascade_selections_no_params', 'GET_reports_taxonomy-terms_no_params']) {
      const h = await run(name);
      expect([name, withoutBench(h.r.json)]).toEqual([name, withoutBench(h.c.body)]);
    }
  });

  it('incoming webhooks: create, list with the form choices, update, a missing name', async () => {
    const created = await run('POST_webhooks');
    expectLike(created.c, created.r);
    const list = await run('GET_webhooks');
    expectLike(list.c, list.r);
    expect(list.r.json.fields).toEqual(list.c.body.fields);
    expect(list.r.json.custom_fields.map((f: Json) => f.key)).toEqual(sim.truth().customFields.map((f) => f.slug));
    const put = await run('PUT_webhooks_id', { path: `/webhooks/${created.r.json.id}` });
    expectLike(put.c, put.r);
    expect(put.r.json.webhooks[0].value).toMatchObject({ name: 'Signup form (renamed)', status: 'pending', companies: [] });
    const bad = await run('POST_webhooks_missing_name');
    expectLike(bad.c, bad.r);
  });
});

// The second capture: a New York site (UTC-5 in November), campaigns sent, funnels with runs.
describe('real mode against the New York site captures (fixtures/fluentcrm-2.9/site-ny)', () => {
  // Seeded as test/simulator/real-streams.test.ts seeds its New York site; the clock is the capture's (18:08:46Z).
  const clock = { ms: Date.parse('2026-11-25T18:08:46Z') };
  let sim: RunningSimulator;
  let call: Api;
  const ny = (name: string): Capture => loadCapture(`site-ny/${name}`);
  const run = async (name: string, o: Parameters<typeof replay>[2] = {}): Promise<{ c: Capture; r: Awaited<ReturnType<typeof replay>> }> => {
    const c = ny(name);
    return { c, r: await replay(sim, c, o) };
  };
  // `plan` and `signup_score` are the site's custom field slugs (data, not shape).
  const IGNORE = new Set([...STEPS, 'plan', 'signup_score']);

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 200, seed: 11, mode: 'real', timezone: 'America/New_York', now: () => clock.ms }));
  });
  afterAll(async () => {
    await sim.close();
  });

  const archived = (): number => sim.truth().campaigns.find((x) => x.status === 'archived')?.id as number;
  const runOf = (funnelId: number, status?: string): { funnelId: number; subscriberId: number; status: string } =>
    sim.truth().funnelSubscribers.find((s) => s.funnelId === funnelId && (status === undefined || s.status === status)) as { funnelId: number; subscriberId: number; status: string };

  it('read routes replayed as captured have the captured status, type and shape', async () => {
    const camp = archived();
    const cases: [string, string?][] = [
      ['GET_campaigns'],
      ['GET_campaigns_id', `/campaigns/${camp}`],
      ['GET_campaigns_with_stats'],
      ['GET_campaigns_id_status', `/campaigns/${camp}/status`],
      ['GET_campaigns_id_overview_stats', `/campaigns/${camp}/overview_stats`],
      ['GET_campaigns_id_estimated-recipients-count', `/campaigns/${camp}/estimated-recipients-count`],
      ['GET_campaigns_id_link-report', `/campaigns/${camp}/link-report`],
      ['GET_campaigns_id_revenues', `/campaigns/${camp}/revenues`],
      ['GET_campaigns_id_unsubscribers', `/campaigns/${camp}/unsubscribers`],
      ['GET_custom-fields_contacts'],
      ['GET_funnels'],
      ['GET_funnels_id'],
      ['GET_funnels_id2'],
      ['GET_funnels_id2_report'],
      ['GET_funnels_id2_subscribers'],
      ['GET_funnels_id2_subscribers_status_all'],
      ['GET_funnels_id2_subscribers_status_active'],
      ['GET_funnels_id_subscribers_status_active'],
      ['GET_funnels_id_subscribers_per_page_2_page_2'],
      ['GET_funnels_id_subscribers_contact_id', `/funnels/1/subscribers/${runOf(1).subscriberId}`],
      ['GET_funnels_subscriber_id_automations', `/funnels/subscriber/${runOf(1).subscriberId}/automations`],
      ['GET_funnels_all-activities'],
      ['GET_funnels_all-activities_status_completed_per_page_2'],
      ['GET_reports_advanced-providers'],
      ['GET_reports_ajax-options'],
      ['GET_reports_ajax-options_option_key_tags'],
      ['GET_reports_cascade_selections'],
      ['GET_reports_taxonomy-terms'],
      ['GET_reports_options_fields_sync_lookups'],
      ['GET_reports_options_no_fields'],
      ['GET_reports_ping'],
      ['GET_subscribers_id'],
      ['GET_subscribers_id_with_stats'],
      ['GET_subscribers_id_before_tag_attach'],
      ['GET_subscribers_id_after_tag_detach'],
      ['GET_subscribers_id_after_list_detach'],
      ['GET_subscribers_id_after_put_attach_tags'],
      ['GET_subscribers_id_after_put_detach_tags'],
      ['GET_subscribers_id_notes'],
      ['GET_subscribers_sort_by_id_sort_type_desc_per_page_1'],
      ['GET_subscribers_sort_by_updated_at_sort_type_desc_after_tag_attach'],
      ['GET_tags_all_tags_true'],
    ];
    for (const [name, path] of cases) {
      const { c, r } = await run(name, path ? { path } : {});
      expectLike(c, r, IGNORE);
    }
    // Funnel 1 has active runs only on the captured site; the simulator's funnel 2 has both.
    const completed = await run('GET_funnels_id2_subscribers_status_completed');
    expectLike(completed.c, completed.r, IGNORE);
    expect(completed.r.json.funnel_subscribers.data.every((s: Json) => s.status === 'completed')).toBe(true);
  });

  it('funnel steps carry the settings of their action as captured (tag, wait, list steps)', async () => {
    const captured = ny('GET_funnels_id_subscribers_contact_id').body.sequences as Json[];
    const ours = (await call('GET', `/funnels/1/subscribers/${runOf(1).subscriberId}`)).json.sequences as Json[];
    const all = [...ours, ...((await call('GET', '/funnels/2')).json.funnel.sequences as Json[])];
    for (const step of captured) {
      const mine = all.find((s) => s.action_name === step.action_name || (step.action_name.includes('_list') && s.action_name.includes('_list')));
      expect([step.action_name, shapeDiff(step, mine, '$')]).toEqual([step.action_name, []]);
      expect([step.action_name, Object.keys(mine.settings).sort()]).toEqual([step.action_name, Object.keys(step.settings).sort()]);
    }
  });

  it('funnel subscribers: newest first, 15 a page, relative page URLs keeping only page; status filters literally', async () => {
    const runs = sim
      .truth()
      .funnelSubscribers.filter((s) => s.funnelId === 1)
      .map((s) => s as unknown as { id: number; status: string })
      .sort((a, b) => b.id - a.id);
    const { c, r } = await run('GET_funnels_id_subscribers_per_page_2_page_2');
    expect(ids(r.json.funnel_subscribers.data)).toEqual(runs.slice(2, 4).map((s) => s.id));
    expect(ids(c.body.funnel_subscribers.data)).toEqual([38, 37]);
    expect(r.json.funnel_subscribers).toMatchObject({ next_page_url: c.body.funnel_subscribers.next_page_url, prev_page_url: c.body.funnel_subscribers.prev_page_url, from: 3, to: 4 });
    const active = await run('GET_funnels_id_subscribers_status_active');
    expect(active.r.json.funnel_subscribers.total).toBe(runs.filter((s) => s.status === 'active').length);
    expect(active.r.json.funnel_subscribers.per_page).toBe(15);
    const completed = await run('GET_funnels_id_subscribers_status_completed');
    expect(completed.r.json.funnel_subscribers.total).toBe(runs.filter((s) => s.status === 'completed').length);
    const all = await run('GET_funnels_id2_subscribers_status_all');
    expect(withoutBench(all.r.json)).toEqual(withoutBench(all.c.body));
    const every = await run('GET_funnels_all-activities_status_completed_per_page_2');
    expect(every.r.json.activities.total).toBe(sim.truth().funnelSubscribers.filter((s) => s.status === 'completed').length);
    expect(every.r.json.activities.data.every((s: Json) => s.status === 'completed' && typeof s.funnel.title === 'string')).toBe(true);
  });

  it('an archived campaign: string stat totals, open/click counts and the click-to-open rate', async () => {
    const c = sim.truth().campaigns.find((x) => x.status === 'archived') as unknown as { id: number; stats: { opened: number; clicked: number } };
    const { r } = await run('GET_campaigns_id_status', { path: `/campaigns/${c.id}/status` });
    expect(r.json.stat.every((s: Json) => typeof s.total === 'string')).toBe(true);
    expect(r.json.analytics.open).toMatchObject({ total: c.stats.opened, label: `Open Rate (${c.stats.opened})`, type: 'open', is_percent: true });
    expect(r.json.analytics.ctor.total).toBe(`${((c.stats.clicked / c.stats.opened) * 100).toFixed(2)}%`);
    expect(r.json.current_timestamp).toBe('2026-11-25 13:08:46'); // site-local wall time
    const overview = await call('GET', `/campaigns/${c.id}/overview_stats`);
    expect(withoutBench(overview.json)).toEqual({ sent_count: r.json.sent_count, stat: r.json.stat, analytics: r.json.analytics });
    const estimate = await run('GET_campaigns_id_estimated-recipients-count', { path: `/campaigns/${c.id}/estimated-recipients-count` });
    expect(estimate.r.json.estimated_count).toBe((await call('GET', `/campaigns/${c.id}`)).json.campaign.recipients_count);
    // The campaign's emails: the captured envelope and paging here; the rows and filter_type are
    // checked in real-mode-campaigns.test.ts.
    for (const name of ['GET_campaigns_id_emails_per_page_5', 'GET_campaigns_id_emails_filter_type_click_per_page_5']) {
      const e = await run(name, { path: `/campaigns/${c.id}/emails?${ny(name).request.query_string}` });
      expect([name, e.r.status, Object.keys(e.r.json).sort()]).toEqual([name, e.c.status, Object.keys(e.c.body).sort()]);
      expect(e.r.json.emails.per_page).toBe(5);
      expect(typeof e.r.json.failed_counts).toBe(typeof e.c.body.failed_counts);
    }
  });

  it('report series: default, 30- and 365-day keys as captured; 75 days weekly with extra week keys', async () => {
    for (const name of ['GET_reports_subscribers', 'GET_reports_email-sents', 'GET_reports_email-opens', 'GET_reports_email-clicks']) {
      for (const suffix of ['', '_date_range_30_days', '_date_range_365_days']) {
        if (name === 'GET_reports_subscribers' && suffix === '_date_range_365_days') continue; // needs a row in Nov 2026, below
        const { c, r } = await run(`${name}${suffix}`);
        expect([name + suffix, Object.keys(r.json.stats as object)]).toEqual([name + suffix, Object.keys(c.body.stats as object)]);
      }
    }
    // Subscribed contacts created on chosen days (site time): 2026-09-13 is a Sunday after the
    // 09-11 step, 2026-10-09 is a step, 2026-11-02 is in the month after the last 365-day step.
    for (const [day, n] of [
      ['2026-09-13', 2],
      ['2026-10-09', 1],
      ['2026-11-02', 3],
    ] as const) {
      clock.ms = Date.parse(`${day}T17:00:00Z`);
      for (let i = 0; i < n; i++) sim.mutate.createContact({ email: `series.${day}.${i}@example.test`, status: 'subscribed' });
    }
    clock.ms = Date.parse('2026-11-25T18:08:46Z');
    const year = await run('GET_reports_subscribers_date_range_365_days');
    expect(Object.keys(year.r.json.stats as object)).toEqual(Object.keys(year.c.body.stats as object));
    expect(year.r.json.stats['Nov 2026']).toBe(3);
    const weeks = await run('GET_reports_subscribers_date_range_75_days');
    const steps = Object.keys(weeks.c.body.stats as object).slice(0, 11); // 09-11 and every 7 days to 11-20
    expect(Object.keys(weeks.r.json.stats as object)).toEqual([...steps, '2026-09-13', '2026-11-02']);
    expect(weeks.r.json.stats).toMatchObject({ '2026-09-11': 0, '2026-09-13': 2, '2026-10-09': 1, '2026-11-02': 3 });
  });

  it('contacts: the single view has `companies` only and integer stats; the notes form; the probe for the newest id', async () => {
    const one = await run('GET_subscribers_id_with_stats');
    expect('company' in one.r.json.subscriber).toBe(false);
    // unsubscribe_reason/_date: only on an unsubscribed contact (contact 58 here is subscribed; the UTC site's contact 1 was not).
    for (const c of sim.truth().contacts.slice(0, 30)) {
      const s = (await call('GET', `/subscribers/${c.id}`)).json.subscriber;
      expect([c.status, 'unsubscribe_reason' in s, 'unsubscribe_date' in s]).toEqual([c.status, c.status === 'unsubscribed', c.status === 'unsubscribed']);
    }
    expect('unsubscribe_reason' in one.c.body.subscriber).toBe(false);
    expect(loadCapture('GET_subscribers_id').body.subscriber.unsubscribe_reason).toBe('');
    expect(Object.values(one.r.json.subscriber.stats as object).every((v) => Number.isInteger(v))).toBe(true);
    const notes = await run('GET_subscribers_id_notes');
    expect(notes.r.json.fields).toEqual(notes.c.body.fields);
    await call('DELETE', '/subscribers/5'); // the count is no longer the largest id
    const probe = await run('GET_subscribers_sort_by_id_sort_type_desc_per_page_1');
    const truth = sim.truth().contacts;
    expect(probe.r.json.subscribers).toMatchObject({ total: truth.length, last_page: truth.length, per_page: 1 });
    expect(rowsOf(probe.r)[0].id).toBe(Math.max(...truth.map((c) => c.id)));
    expect(probe.c.body.subscribers.total).not.toBe(probe.c.body.subscribers.data[0].id);
    const all = await run('GET_tags_all_tags_true');
    expect(all.r.json.all_tags.every((t: Json) => typeof t.id === 'string')).toBe(true);
  });

  it('webhooks: the listing carries the form choices, and __bench as captured', async () => {
    await call('POST', '/webhooks', { name: 'crmsync', url: 'https://hooks.example.test/crm', events: ['contact.created'], status: 'active', secret: 's3cret' });
    const c = ny('GET_webhooks');
    const r = await api(sim)('GET', routeOf(c));
    expectLike(c, r, IGNORE);
    expect(r.json.fields).toEqual(c.body.fields);
    expect(ids(r.json.tags)).toEqual(sim.truth().tags.map((t) => t.id));
  });
});
