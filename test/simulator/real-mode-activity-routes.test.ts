import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay, withoutBench } from './capture-replay.js';
import { withSim, type Api } from './helpers.js';

// The contact profile's activity panels and the funnel screen's report panels of fluentcrm-2.9,
// as the site-ny captures answer them (site-ny/README.md, "Contact activity" and "Funnel report
// routes"): fixed envelopes, or 422 for the event tracker, whatever the contact.
const CONTACT_PANELS = ['form-submissions', 'info-widgets', 'purchase-history', 'support-tickets', 'tracking-events'];
const FUNNEL_PANELS = ['email_reports', 'syncable-counts'];

describe('real mode: the activity and funnel report panels as captured', () => {
  let sim: RunningSimulator;
  let spec: RunningSimulator;
  let specCall: Api;
  let contactId: number;
  let funnelId: number;

  beforeAll(async () => {
    ({ sim } = await withSim({ contacts: 30, seed: 7, mode: 'real' }));
    ({ sim: spec, call: specCall } = await withSim({ contacts: 30, seed: 7 }));
    contactId = sim.truth().contacts[0]!.id;
    funnelId = Number((await replay(sim, loadCapture('site-ny/GET_funnels'), { path: '/funnels' })).json.funnels.data[0].id);
  });
  afterAll(async () => {
    await sim?.close();
    await spec?.close();
  });

  it.each(CONTACT_PANELS)('GET /subscribers/{id}/%s answers the captured status and body', async (panel) => {
    const c = loadCapture(`site-ny/GET_subscribers_id_${panel}`);
    for (const id of [contactId, 999_999]) {
      const r = await replay(sim, c, { path: `/subscribers/${id}/${panel}` });
      expectLike(c, r);
      expect(withoutBench(r.json)).toEqual(withoutBench(c.body));
      expect(r.headers.get('allow')).toBe(c.headers.allow ?? null);
    }
  });

  it.each(FUNNEL_PANELS)('GET /funnels/{id}/%s answers the captured body, and 404 for an unknown funnel', async (panel) => {
    const c = loadCapture(`site-ny/GET_funnels_id_${panel}`);
    const r = await replay(sim, c, { path: `/funnels/${funnelId}/${panel}` });
    expectLike(c, r);
    expect(withoutBench(r.json)).toEqual(withoutBench(c.body));
    const unknown = await replay(sim, c, { path: `/funnels/999999/${panel}` });
    const captured404 = loadCapture('GET_funnels_999999_subscribers');
    expect({ status: unknown.status, body: unknown.json }).toEqual({ status: captured404.status, body: captured404.body });
  });

  it('spec mode does not serve them: the written interface has no such routes', async () => {
    for (const path of [...CONTACT_PANELS.map((p) => `/subscribers/${contactId}/${p}`), ...FUNNEL_PANELS.map((p) => `/funnels/${funnelId}/${p}`)]) {
      expect((await specCall('GET', path)).status, path).toBe(404);
    }
  });
});
