import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator, TruthContact } from '../../src/simulator/index.js';
import { loadCapture, replay, withoutBench, type Capture } from './capture-replay.js';
import { api, withSim, type ApiResponse, type Json } from './helpers.js';

// The captures real mode serves beside the contact routes: the site-URL incoming webhook
// (POST_incoming_webhook_*, GET_incoming_webhook; README "Incoming webhook"), WordPress's
// namespace index (GET_wp-json_namespace_fluent-crm_v2) and the custom field definitions' PUT
// (PUT_custom-fields_contacts), replayed against a real-mode simulator on port 0.

const ADMIN = { username: 'admin', password: 'captured-admin-password-1' };
const SITE_CAPTURES = [
  'POST_incoming_webhook_contact',
  'POST_incoming_webhook_contact_form_encoded',
  'POST_incoming_webhook_missing_email',
  'POST_incoming_webhook_wrong_hash',
  'GET_incoming_webhook',
];
/** Headers of WordPress's REST answers that the captured webhook answers lack. */
const REST_HEADERS = ['cache-control', 'expires', 'vary', 'allow', 'access-control-expose-headers'];

const originOf = (sim: RunningSimulator): string => sim.baseUrl.replace(/\/wp-json\/.*$/, '');

/** Sends a site-URL capture to the simulator's site URL, with `hash` in place of the redacted one. */
function replaySite(sim: RunningSimulator, c: Capture, hash: string): Promise<ApiResponse> {
  const site = { ...sim, baseUrl: originOf(sim) } as RunningSimulator;
  return replay(site, c, { path: `/?${c.request.query_string!.replace('hash=REDACTED', `hash=${hash}`)}` });
}

/** POST_incoming_webhook_contact with another JSON body (data of the simulator). */
function postSite(sim: RunningSimulator, hash: string, body: Record<string, unknown>): Promise<ApiResponse> {
  const site = { ...sim, baseUrl: originOf(sim) } as RunningSimulator;
  return replay(site, loadCapture('POST_incoming_webhook_contact'), { path: `/?fluentcrm=1&route=contact&hash=${hash}`, body });
}

describe('real mode: the site-URL incoming webhook as captured', () => {
  let sim: RunningSimulator;
  let hash: string;
  const contact = (email: string): TruthContact | undefined => sim.truth().contacts.find((x) => x.email === email);

  beforeAll(async () => {
    ({ sim } = await withSim({ contacts: 30, seed: 4, mode: 'real', credentials: ADMIN }));
    const created = await replay(sim, loadCapture('POST_webhooks'));
    hash = new URL(created.json.webhook.url as string).searchParams.get('hash')!;
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('a wrong hash, a GET and a missing email answer the captured bodies and create nobody', async () => {
    const before = sim.truth().contacts.length;
    const cases: [string, string][] = [
      ['POST_incoming_webhook_wrong_hash', 'not-a-webhook-key'],
      ['POST_incoming_webhook_wrong_hash', ''],
      ['GET_incoming_webhook', hash],
      ['POST_incoming_webhook_missing_email', hash],
    ];
    for (const [name, h] of cases) {
      const c = loadCapture(name);
      expect([name, (await replaySite(sim, c, h)).json]).toEqual([name, c.body]);
    }
    expect(contact('webhook.bad@example.test')).toBeUndefined();
    expect(sim.truth().contacts.length).toBe(before);
  });

  it('a valid JSON or form POST creates the contact with the webhook status, tags and lists, and answers its id', async () => {
    const { body: hook } = loadCapture('POST_webhooks').request as { body: Json };
    for (const [name, email, first] of [
      ['POST_incoming_webhook_contact', 'webhook.lead@example.test', 'Web'],
      ['POST_incoming_webhook_contact_form_encoded', 'webhook.form@example.test', 'WebForm'],
    ] as const) {
      const c = loadCapture(name);
      const r = await replaySite(sim, c, hash);
      const made = contact(email)!;
      expect(r.json).toEqual({ ...c.body, data: { ...c.body.data, id: made.id } });
      expect([made.first_name, made.status, made.tags, made.lists]).toEqual([first, hook.status, hook.tags, hook.lists]);
    }
    expect(contact('webhook.lead@example.test')!.last_name).toBe('Hook');
  });

  it('a known email is updated through the same create path (not captured: message "updated")', async () => {
    const existing = sim.truth().contacts[0]!;
    const r = await postSite(sim, hash, { email: existing.email, city: 'Lisbon', membership_number: '4242' });
    expect(r.json).toEqual({ success: true, data: { message: 'updated', id: existing.id, type: 'success' } });
    const now = contact(existing.email)!;
    expect([now.city, now.custom_values.membership_number, now.tags.includes(3), now.lists.includes(2)]).toEqual(['Lisbon', '4242', true, true]);
  });

  it('a webhook set to pending creates pending contacts (the double opt-in mail leaves the answer alike)', async () => {
    const id = (await api(sim)('GET', '/webhooks')).json.webhooks[0].id as number;
    await replay(sim, loadCapture('PUT_webhooks_id'), { path: `/webhooks/${id}` });
    const r = await postSite(sim, hash, { email: 'pending.lead@example.test' });
    expect(r.json.data.message).toBe('created');
    expect(contact('pending.lead@example.test')!.status).toBe('pending');
  });

  // After the tests above: replaying POST_incoming_webhook_contact creates its lead.
  it.each(SITE_CAPTURES)('%s: HTTP 200, the captured content type and none of the REST headers', async (name) => {
    const c = loadCapture(name);
    const r = await replaySite(sim, c, name.endsWith('wrong_hash') ? 'not-a-webhook-key' : hash);
    expect([r.status, r.headers.get('content-type')]).toEqual([c.status, c.headers['content-type']]);
    for (const h of REST_HEADERS) expect([name, h, r.headers.get(h)]).toEqual([name, h, c.headers[h] ?? null]);
  });

  it('only that site URL in real mode is the webhook: other site URLs, and spec mode, answer 404 rest_no_route as before', async () => {
    const { sim: spec } = await withSim({ contacts: 5, seed: 4 });
    try {
      const got: [string, number, unknown][] = [];
      for (const [s, path] of [
        [sim, `/?fluentcrm=1&route=contact&hash=${hash}`],
        [sim, '/'],
        [sim, '/?fluentcrm=1&route=unsubscribe'],
        [spec, `/?fluentcrm=1&route=contact&hash=${hash}`],
      ] as const) {
        const r = await fetch(`${originOf(s)}${path}`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '{"email":"elsewhere@example.test"}' });
        const body = (await r.json()) as Json;
        got.push([`${s.mode} ${path}`, r.status, body.code ?? body.success]);
      }
      expect(got.map(([, status, what]) => [status, what])).toEqual([
        [200, true],
        [404, 'rest_no_route'],
        [404, 'rest_no_route'],
        [404, 'rest_no_route'],
      ]);
    } finally {
      await spec.close();
    }
  });
});

describe('real mode: the namespace index and the custom field definitions as captured', () => {
  let sim: RunningSimulator;

  beforeAll(async () => {
    ({ sim } = await withSim({ contacts: 40, seed: 4, mode: 'real', credentials: ADMIN }));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('GET /wp-json/fluent-crm/v2 lists the served routes as the captured index lists the same routes', async () => {
    const c = loadCapture('GET_wp-json_namespace_fluent-crm_v2');
    const r = await replay(sim, c, { who: null, path: '' });
    expect([r.status, r.headers.get('content-type'), r.headers.get('allow')]).toEqual([c.status, c.headers['content-type'], c.headers.allow]);
    const theirs = JSON.parse(JSON.stringify(c.body).replaceAll('http://127.0.0.1:8080', originOf(sim))) as Json;
    expect([r.json.namespace, r.json._links, '__bench' in r.json]).toEqual([theirs.namespace, theirs._links, false]);
    const ours = r.json.routes as Record<string, Json>;
    const shared = Object.keys(ours).filter((k) => k in theirs.routes);
    for (const k of shared) expect([k, ours[k]]).toEqual([k, theirs.routes[k]]);
    expect(shared).toEqual(expect.arrayContaining(['/fluent-crm/v2', '/fluent-crm/v2/subscribers/(?P<id>[0-9]+)/notes/(?P<note_id>[0-9]+)', '/fluent-crm/v2/custom-fields/contacts']));
    expect(shared.length).toBeGreaterThan(60);
    // The rest: routes the free plugin lacks (spec mode's, served in real mode too), and one the
    // plugin names with another parameter pattern.
    const plugin = Object.keys(theirs.routes).map((k) => new RegExp(`^${k.replace(/\(\?P</g, '(?<')}$`));
    const sample = (k: string): string => k.replace(/\(\?P<[a-z_]+>[^)]+\)/g, '7');
    const unshared = Object.keys(ours).filter((k) => !(k in theirs.routes) && plugin.some((re) => re.test(sample(k))));
    expect(unshared).toEqual(['/fluent-crm/v2/funnels/subscriber/(?P<id>[0-9]+)/automations']);
  });

  it('PUT /custom-fields/contacts answers the captured body; GET then answers the captured definitions', async () => {
    const put = loadCapture('PUT_custom-fields_contacts');
    const r = await replay(sim, put);
    expect([r.status, r.headers.get('allow'), typeof r.json.__bench]).toEqual([put.status, put.headers.allow, 'number']);
    expect(withoutBench(r.json)).toEqual(withoutBench(put.body));
    const get = loadCapture('GET_custom-fields_contacts');
    expect(withoutBench((await replay(sim, get)).json)).toEqual(withoutBench(get.body));
    expect((await api(sim)('GET', '/webhooks')).json.custom_fields).toEqual(put.body.fields.map((f: Json) => ({ key: f.slug, field: f.label })));
  });

  it('contact values follow the definitions: dropped fields are not shown nor written, and come back when defined again', async () => {
    const call = api(sim);
    const put = loadCapture('PUT_custom-fields_contacts');
    const seeded = sim.truth().contacts.find((x) => 'interests' in x.custom_values && 'favorite_color' in x.custom_values)!;
    const values = async (): Promise<Json> => (await call('GET', `/subscribers/${seeded.id}?with[]=subscriber.custom_values`)).json.subscriber.custom_values;
    await replay(sim, put);
    expect(Object.keys(await values())).toEqual(Object.keys(seeded.custom_values).filter((k) => ['favorite_color', 'membership_number', 'renewal_date'].includes(k)));
    const row = (await call('GET', `/subscribers?custom_fields=true&per_page=1000`)).json.subscribers.data.find((x: Json) => x.id === seeded.id);
    expect(row.custom_fields).toEqual(await values());
    await call('PUT', `/subscribers/${seeded.id}`, { custom_values: { interests: ['Dropped'], renewal_date: '2027-01-15' } });
    expect(await values()).not.toHaveProperty('interests');
    expect((await values()).renewal_date).toBe('2027-01-15');
    // Defined again (with a new one): the stored value shows again, and the new field takes values.
    const interests = { label: 'Interests', slug: 'interests', type: 'checkbox', field_key: 'checkbox', options: ['Analytics', 'Marketing', 'Sales', 'Support'], group: 'default' };
    const plan = { label: 'Plan', slug: 'plan', type: 'text', field_key: 'text', group: 'Billing' };
    const saved = await call('PUT', '/custom-fields/contacts', { fields: [...put.body.fields, interests, plan] });
    expect(saved.json.fields.slice(-2)).toEqual([interests, plan]);
    await call('PUT', `/subscribers/${seeded.id}`, { custom_values: { plan: 'Pro' } });
    expect(await values()).toMatchObject({ interests: seeded.custom_values.interests, plan: 'Pro' });
    expect((await call('GET', '/custom-fields/contacts')).json.fields.at(-1)).toEqual(plan);
  });

  it('spec mode serves neither (the written interface has no such routes)', async () => {
    const { sim: spec } = await withSim({ contacts: 5, seed: 4 });
    try {
      const fields = loadCapture('PUT_custom-fields_contacts').request.body as Json;
      const statuses = [];
      for (const call of [api(sim), api(spec)]) statuses.push((await call('PUT', '/custom-fields/contacts', fields)).status, (await call('GET', '')).status);
      expect(statuses).toEqual([200, 200, 404, 404]);
    } finally {
      await spec.close();
    }
  });
});
