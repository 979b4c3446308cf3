import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { api, isSpecError, withSim, type Api } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 30, seed: 12 }));
});
afterAll(async () => {
  await sim.close();
});

/** The Errors table of the spec, row by row, with the body shape {code, message, data.status}. */
describe('spec: Errors table', () => {
  it('unknown contact, tag, list, webhook, campaign, funnel or sequence id: 404 rest_post_invalid_id', async () => {
    for (const path of ['/subscribers/99999', '/tags/99999', '/lists/99999', '/campaigns/99999', '/funnels/99999', '/sequences/99999']) {
      const r = await call('GET', path);
      expect({ path, ok: isSpecError(r.json, 404, 'rest_post_invalid_id'), status: r.status }).toEqual({ path, ok: true, status: 404 });
    }
    const w = await call('PUT', '/webhooks/99999', { name: 'x' });
    expect(isSpecError(w.json, 404, 'rest_post_invalid_id')).toBe(true);
  });

  it('invalid email on a contact: 400 rest_invalid_param (create and update)', async () => {
    expect(isSpecError((await call('POST', '/subscribers', { email: 'nope', status: 'subscribed' })).json, 400, 'rest_invalid_param')).toBe(true);
    expect(isSpecError((await call('PUT', '/subscribers/1', { subscriber: { email: 'still nope' } })).json, 400, 'rest_invalid_param')).toBe(true);
  });

  it('duplicate contact email without force update: 409, body with message and data only', async () => {
    const r = await call('POST', '/subscribers', { email: sim.truth().contacts[0]?.email, status: 'subscribed' });
    expect(r.status).toBe(409);
    expect(Object.keys(r.json).sort()).toEqual(['data', 'message']);
  });

  it('duplicate tag title and duplicate list title: 400 rest_invalid_param', async () => {
    expect(isSpecError((await call('POST', '/tags', { title: 'VIP' })).json, 400, 'rest_invalid_param')).toBe(true);
    expect(isSpecError((await call('POST', '/lists', { title: 'Customers' })).json, 400, 'rest_invalid_param')).toBe(true);
  });

  it('funnel status outside published, draft, paused: 400 rest_invalid_param', async () => {
    expect(isSpecError((await call('PUT', '/funnels/1/status', { status: 'live' })).json, 400, 'rest_invalid_param')).toBe(true);
  });

  it('contact already active in the funnel: 409 subscriber_already_exists', async () => {
    const active = sim.truth().funnelSubscribers.find((s) => s.status === 'active') as { funnelId: number; subscriberId: number };
    const r = await call('POST', `/funnels/${active.funnelId}/subscribers`, { subscribers: [active.subscriberId] });
    expect(isSpecError(r.json, 409, 'subscriber_already_exists')).toBe(true);
  });

  it('pausing a campaign not in working status: 400 rest_invalid_param', async () => {
    const sent = sim.truth().campaigns.find((c) => c.status === 'sent') as { id: number };
    expect(isSpecError((await call('POST', `/campaigns/${sent.id}/pause`)).json, 400, 'rest_invalid_param')).toBe(true);
  });

  it('report date range where the end precedes the start: 400 invalid_date_range; unknown report: 404 report_not_found', async () => {
    expect(isSpecError((await call('GET', '/reports/overview?date_range=custom&start_date=2026-02-01&end_date=2026-01-01')).json, 400, 'invalid_date_range')).toBe(true);
    expect(isSpecError((await call('GET', '/reports/nope')).json, 404, 'report_not_found')).toBe(true);
  });

  it('webhook URL not valid HTTPS: 400 invalid_webhook_url; unsupported event: 400 invalid_webhook_event', async () => {
    expect(isSpecError((await call('POST', '/webhooks', { name: 'a', url: 'ftp://example.test/x', events: ['contact.created'] })).json, 400, 'invalid_webhook_url')).toBe(true);
    expect(isSpecError((await call('POST', '/webhooks', { name: 'a', url: 'https://example.test/x', events: ['contact.birthday'] })).json, 400, 'invalid_webhook_event')).toBe(true);
  });

  it('unknown custom field and an option not defined for a select field: 400 rest_invalid_param', async () => {
    expect(isSpecError((await call('PUT', '/subscribers/2', { subscriber: { custom_values: { nope: 'x' } } })).json, 400, 'rest_invalid_param')).toBe(true);
    expect(isSpecError((await call('PUT', '/subscribers/2', { subscriber: { custom_values: { preferred_channel: 'Fax' } } })).json, 400, 'rest_invalid_param')).toBe(true);
  });

  it('access denied to a sequence: 403 rest_forbidden', async () => {
    const s = await withSim({
      contacts: 3,
      credentials: { username: 'boss', password: 'boss-password' },
      users: [
        { username: 'boss', password: 'boss-password', capabilities: ['crm_manage_settings'] },
        { username: 'contacts-only', password: 'contacts-password', capabilities: ['crm_read_contacts', 'crm_manage_contacts'] },
      ],
    });
    try {
      const r = await api(s.sim, { username: 'contacts-only', password: 'contacts-password' })('GET', '/sequences/1');
      expect(isSpecError(r.json, 403, 'rest_forbidden')).toBe(true);
    } finally {
      await s.sim.close();
    }
  });
});
