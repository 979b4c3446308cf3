import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { api, withSim, type Api, type Json } from './helpers.js';
import { shapeDiff } from './shape.js';
import { sharedFixtureDir } from '../helpers/shared-fixtures.js';

// Found next to the checkout (../shared), wherever it is; a missing folder fails every test here.
const FIXTURES = sharedFixtureDir();

interface Fixture {
  request: { method: string; query_string: string | null; body: unknown };
  status: number;
  headers: Record<string, string>;
  body_is_json: boolean;
  body: Json;
}

const fixture = (name: string): Fixture => JSON.parse(readFileSync(`${FIXTURES}/${name}.json`, 'utf8')) as Fixture;

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 80, seed: 4, mode: 'real' }));
});
afterAll(async () => {
  await sim.close();
});

// Keys fluentcrm-2.9 sends that the simulator does not model (campaign UTM and A/B internals, admin UI helpers).
const UNMODELLED = new Set([
  'available_urls',
  'utm_status',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'next_step',
  'template_id',
  'parent_id',
  'fields',
  'excludedSubscribers',
  'dynamic_segment',
  'advanced_filters',
  'template_config',
  'footer_settings',
  'subscribers',
  'facebook_url',
  'twitter_url',
  'date_of_start',
  'starting_sequence_id',
  'next_sequence',
  'last_sequence_status',
  'last_executed_time',
  'notes',
  'source_ref_id',
  'trigger',
  'settingsFields',
  'conditionFields',
  'templates',
  'is_test',
  'sending_filter',
  'mailer_settings',
  'subscriber',
]);

describe('real-deployment mode: response shapes match the captured fixtures', () => {
  const cases: [string, string, string, unknown?][] = [
    ['GET_subscribers_per_page_5_page_2', 'GET', '/subscribers?per_page=5&page=2'],
    ['GET_subscribers_custom_fields_true', 'GET', '/subscribers?custom_fields=true&per_page=5'],
    ['GET_subscribers_id_with_stats_custom_fields', 'GET', '/subscribers/1?with[]=stats&with[]=custom_fields'],
    ['GET_subscribers_id_with_subscriber.custom_values', 'GET', '/subscribers/1?with[]=subscriber.custom_values'],
    ['GET_subscribers_0_get_by_email', 'GET', '/subscribers/0?get_by_email=EMAIL'],
    ['POST_subscribers_create', 'POST', '/subscribers', { email: 'created.real@example.org', status: 'subscribed', first_name: 'Ada', tags: [1], lists: [1] }],
    ['PUT_subscribers_id_attach_tags', 'PUT', '/subscribers/2', { subscriber: { attach_tags: [3], first_name: 'Put' } }],
    ['GET_subscribers_999999', 'GET', '/subscribers/999999'],
    ['PUT_subscribers_999999', 'PUT', '/subscribers/999999', { subscriber: { city: 'x' } }],
    ['GET_subscribers_per_page_0', 'GET', '/subscribers?per_page=0'],
    ['GET_subscribers_per_page_-1', 'GET', '/subscribers?per_page=-1'],
    ['GET_subscribers_page_99', 'GET', '/subscribers?page=99'],
    ['GET_unknown_route', 'GET', '/unknown-route'],
    ['GET_tags', 'GET', '/tags'],
    ['GET_tags_all_tags_true', 'GET', '/tags?all_tags=true'],
    ['GET_tags_999999', 'GET', '/tags/999999'],
    ['GET_lists', 'GET', '/lists'],
    ['POST_tags', 'POST', '/tags', { title: 'Brand New Tag', description: 'x' }],
    ['POST_tags_duplicate_title', 'POST', '/tags', { title: 'VIP' }],
    ['PUT_tags_id', 'PUT', '/tags/2', { description: 'renamed' }],
    ['POST_lists_duplicate_title', 'POST', '/lists', { title: 'Customers' }],
    ['DELETE_lists_999999', 'DELETE', '/lists/999999'],
    ['GET_funnels', 'GET', '/funnels'],
    ['GET_funnels_id_subscribers', 'GET', '/funnels/1/subscribers'],
    ['GET_funnels_999999_subscribers', 'GET', '/funnels/999999/subscribers'],
    ['GET_campaigns_with_stats', 'GET', '/campaigns?with[]=stats'],
    ['GET_campaigns_999999', 'GET', '/campaigns/999999'],
    ['GET_campaigns_sort_by_bogus', 'GET', '/campaigns?sort_by=bogus'],
    ['GET_companies', 'GET', '/companies'],
    ['GET_custom-fields_contacts', 'GET', '/custom-fields/contacts'],
    ['GET_subscribers_id_notes', 'GET', '/subscribers/1/notes'],
    ['POST_subscribers_id_notes', 'POST', '/subscribers/1/notes', { note: { title: 'Call', description: '<p>x</p>', type: 'note' } }],
    ['GET_reports_ping', 'GET', '/reports/ping'],
    ['GET_reports_options_no_fields', 'GET', '/reports/options'],
  ];
  for (const [name, method, path, body] of cases) {
    it(`${name}: same status and shape`, async () => {
      const f = fixture(name);
      const email = sim.truth().contacts[0]?.email as string;
      const r = await call(method, path.replace('EMAIL', encodeURIComponent(email)), body);
      expect(r.status).toBe(f.status);
      expect(r.headers.get('content-type')).toBe(f.headers['content-type']);
      if (f.body_is_json) expect(shapeDiff(f.body, r.json, '$', UNMODELLED)).toEqual([]);
    });
  }

  it('error bodies equal the captured ones, replaying the request of each capture', async () => {
    const names = [
      'POST_subscribers_invalid_json',
      'POST_subscribers_empty_body',
      'POST_subscribers_invalid_email',
      'POST_subscribers_missing_status',
      'POST_subscribers_missing_email',
      'POST_subscribers_id_notes_missing_title',
      'POST_tags_missing_title',
      'POST_tags_duplicate_title',
      'POST_lists_missing_title',
      'POST_lists_duplicate_title',
      'PUT_tags_999999',
      'PUT_lists_999999',
      'PUT_tags_id_duplicate_slug',
      'GET_companies_999999',
      'DELETE_tags_999999',
      'GET_subscribers_0_get_by_email_unknown',
      'GET_subscribers_999999',
      'DELETE_subscribers_id_again',
      'PATCH_subscribers_id',
      'POST_subscribers_id_no_override',
      'GET_subscribers_abc_non_numeric_id',
      'POST_companies_duplicate_name',
      'GET_subscribers_per_page_-1',
      'GET_subscribers_no_auth',
      'GET_subscribers_wrong_password',
    ];
    await call('DELETE', '/subscribers/3');
    for (const name of names) {
      const f = fixture(name) as Fixture & { request: { path: string; body_encoding: string | null; auth?: string } };
      let path = f.request.path.replace('/wp-json/fluent-crm/v2', '');
      if (name === 'DELETE_subscribers_id_again') path = '/subscribers/3';
      if (name === 'PUT_tags_id_duplicate_slug') path = '/tags/2';
      const url = `${path}${f.request.query_string ? `?${f.request.query_string}` : ''}`;
      const body = f.request.body === null ? undefined : f.request.body_encoding === 'raw' ? (f.request.body as string) : f.request.body;
      const who = name.includes('no_auth') ? null : name.includes('wrong_password') ? { username: sim.credentials.username, password: 'wrong' } : sim.credentials;
      const r = await api(sim, who)(f.request.method, url, body);
      expect({ name, status: r.status, body: r.json }).toEqual({ name, status: f.status, body: f.body });
    }
  });

  it('PUT with the email of another contact is the same 422 as a duplicate create', async () => {
    const other = sim.truth().contacts[0]?.email as string;
    const r = await call('PUT', '/subscribers/2', { email: other });
    expect(r.status).toBe(422);
    expect(r.json).toEqual(fixture('PUT_subscribers_id_duplicate_email').body);
  });

  it('duplicate email: 422 with a bare field map, case-insensitive, no 409', async () => {
    const f = fixture('POST_subscribers_duplicate_email');
    const email = (sim.truth().contacts[5]?.email as string).toUpperCase();
    const r = await call('POST', '/subscribers', { email, status: 'subscribed' });
    expect(r.status).toBe(422);
    expect(r.json).toEqual(f.body);
  });

  it('ids and counts are typed as captured: user_id/company_id/total_points strings, pivot ids strings, all_tags ids strings', async () => {
    const c = (await call('GET', '/subscribers?per_page=50')).json.subscribers.data.find((x: Json) => x.company_id !== null && x.tags.length > 0);
    expect(typeof c.company_id).toBe('string');
    expect(c.total_points).toBe('0');
    expect(typeof c.tags[0].pivot.subscriber_id).toBe('string');
    const all = await call('GET', '/tags?all_tags=true');
    expect(typeof all.json.all_tags[0].id).toBe('string');
    expect(typeof all.json.tags.data[0].id).toBe('number');
  });

  it('contacts without custom values get [] (not {}) with custom_fields=true', async () => {
    const r = await call('GET', '/subscribers?custom_fields=true&per_page=80');
    const empty = r.json.subscribers.data.find((x: Json) => Array.isArray(x.custom_fields));
    expect(empty.custom_fields).toEqual([]);
    expect(r.json.custom).toBe('true');
  });

  it('order_by/order_type are ignored; sort_by/sort_type honoured (asc case-insensitive); sort_by=bogus gives table order', async () => {
    const ids = sim.truth().contacts.map((c) => c.id);
    const ignored = await call('GET', '/subscribers?order_by=id&order_type=ASC&per_page=3');
    expect(ignored.json.subscribers.data.map((x: Json) => x.id)).toEqual(ids.slice(-3).reverse());
    const asc = await call('GET', '/subscribers?sort_by=id&sort_type=asc&per_page=3');
    expect(asc.json.subscribers.data.map((x: Json) => x.id)).toEqual(ids.slice(0, 3));
    const bogus = await call('GET', '/subscribers?sort_by=bogus&sort_type=DESC&per_page=3');
    expect(bogus.json.subscribers.data.map((x: Json) => x.id)).toEqual(ids.slice(0, 3));
    expect((await call('GET', '/subscribers')).json.subscribers.per_page).toBe(15);
  });

  it('a 500 without Accept: application/json is an HTML page; paginator URLs are relative and keep only page', async () => {
    const res = await fetch(`${sim.baseUrl}/subscribers?per_page=0`, {
      headers: { authorization: `Basic ${Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64')}` },
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('text/html; charset=UTF-8');
    expect(await res.text()).toContain('<!DOCTYPE html>');
    const p = (await call('GET', '/subscribers?per_page=5&page=2')).json.subscribers;
    expect(p.next_page_url).toBe('/wp-json/fluent-crm/v2/subscribers?page=3');
    expect(p.prev_page_url).toBe('/wp-json/fluent-crm/v2/subscribers?page=1');
  });

  it('__force_update: "yes" and true update; "true" and 1 are duplicates; unknown status becomes subscribed; missing status is 422 even with force', async () => {
    const email = sim.truth().contacts[8]?.email as string;
    expect((await call('POST', '/subscribers', { email, status: 'subscribed', __force_update: 'yes' })).json.action_type).toBe('updated');
    expect((await call('POST', '/subscribers', { email, status: 'subscribed', __force_update: true })).json.action_type).toBe('updated');
    expect((await call('POST', '/subscribers', { email, status: 'subscribed', __force_update: 'true' })).status).toBe(422);
    expect((await call('POST', '/subscribers', { email, status: 'subscribed', __force_update: 1 })).status).toBe(422);
    expect((await call('POST', '/subscribers', { email, __force_update: 'yes' })).json).toEqual(fixture('POST_subscribers_missing_status').body);
    const typo = await call('POST', '/subscribers', { email: 'typo@example.org', status: 'subscirbed' });
    expect(typo.json.contact.status).toBe('subscribed');
  });

  it('401 and 403 are rest_forbidden; the manager gets 403 on delete', async () => {
    const anon = await api(sim, null)('GET', '/subscribers');
    expect(anon.status).toBe(401);
    expect(anon.json).toEqual(fixture('GET_subscribers_no_auth').body);
    const del = await api(sim, sim.managerCredentials ?? null)('DELETE', '/subscribers/3');
    expect(del.status).toBe(403);
    expect(del.json.code).toBe('rest_forbidden');
  });

  it('timestamps are zone-less in the site time zone', async () => {
    const { sim: tz, call: tzCall } = await withSim({ contacts: 3, mode: 'real', timezone: 'Asia/Tokyo' });
    try {
      const t = tz.truth().contacts[0];
      const r = await tzCall('GET', `/subscribers/${t?.id}`);
      const local = r.json.subscriber.created_at as string;
      expect(local).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(Date.parse(`${local.replace(' ', 'T')}+09:00`)).toBe(Date.parse(t?.created_at_iso as string));
    } finally {
      await tz.close();
    }
  });
});
