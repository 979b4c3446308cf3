import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { withSim, type Api, type Json } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 80, seed: 17 }));
});
afterAll(async () => {
  await sim.close();
});

/**
 * Endpoints whose response shape the spec leaves "not shown": each must exist (200) and answer a
 * JSON object, or a plain array for picker endpoints. Shapes the spec gives are tested elsewhere.
 */
describe('every endpoint of the detailed modules is served', () => {
  const reads = [
    '/campaigns/1/estimated-recipients-count',
    '/campaigns/1/emails',
    '/campaigns/1/link-report',
    '/campaigns/1/revenues',
    '/campaigns/1/unsubscribers',
    '/sequences/subscriber/SEQ_CONTACT/sequences',
    '/funnels/1/report',
    '/funnels/1/conversion-rates',
    '/reports/campaigns',
    '/reports/campaigns/1',
    '/reports/campaigns/1/export?format=json&include[]=subscribers',
    '/reports/campaigns/1/live',
    '/reports/funnels',
    '/reports/funnels/1',
    '/reports/funnels/1/live',
    '/reports/subscriber-activity',
    '/reports/subscribers/export',
    '/reports/revenue/campaigns',
    '/reports/revenue/contacts',
    '/reports/bounces',
    '/reports/spam-complaints',
    '/reports/unsubscribes',
    '/reports/lists',
    '/reports/lists/1',
    '/reports/tags',
    '/reports/tags/1',
    '/reports/segmentation-analysis',
    '/reports/ab-testing',
    '/reports/engagement-scores',
    '/reports/overview?date_range=today',
    '/reports/overview?date_range=yesterday&compare_with=previous_period',
    '/reports/overview?date_range=12_months&lists[]=1&tags[]=2',
  ];
  it.each(reads)('GET %s', async (path) => {
    const contact = (sim.truth().sequences[0] as Json).subscriberIds[0];
    const r = await call('GET', path.replace('SEQ_CONTACT', String(contact)));
    expect(r.status).toBe(200);
    expect(typeof r.json).toBe('object');
  });

  it('templates: create, update, duplicate, delete', async () => {
    const c = await call('POST', '/templates', {
      template: { post_title: 'Receipt', post_content: '<p>x</p>', post_excerpt: 'e', email_subject: 's', edit_type: 'html', design_template: 'raw_html' },
    });
    expect(c.status).toBe(200);
    const id = c.json.template.ID;
    expect((await call('PUT', `/templates/${id}`, { template: { post_title: 'Receipt v2' } })).json.template.post_title).toBe('Receipt v2');
    const dup = await call('POST', `/templates/duplicate/${id}`);
    expect(dup.json.template.ID).not.toBe(id);
    expect((await call('DELETE', `/templates/${id}`)).status).toBe(200);
    expect((await call('DELETE', `/templates/${id}`)).status).toBe(404);
    expect((await call('POST', '/templates', { template: { post_content: 'no title' } })).status).toBe(400);
  });

  it('sequences: duplicate, delete, bulk delete (sequence_ids required)', async () => {
    const dup = await call('POST', '/sequences/1/duplicate');
    const id = dup.json.sequence.id;
    expect(dup.json.sequence.status).toBe('draft');
    expect((await call('DELETE', `/sequences/${id}`)).status).toBe(200);
    expect((await call('GET', `/sequences/${id}`)).status).toBe(404);
    expect((await call('POST', '/sequences/do-bulk-action', {})).status).toBe(400);
    expect((await call('POST', '/sequences/do-bulk-action', { sequence_ids: [3] })).status).toBe(200);
    expect(sim.truth().sequences.some((s) => s.id === 3)).toBe(false);
  });

  it('campaign status polling changes nothing for a draft; resume of a non-paused campaign is 400', async () => {
    const draft = sim.truth().campaigns.find((c) => c.status === 'draft') as Json;
    const r = await call('GET', `/campaigns/${draft.id}/status?request_counter=4`);
    expect(r.json.campaign.status).toBe('draft');
    expect(r.json.sent_count).toBe(0);
    expect((await call('POST', `/campaigns/${draft.id}/resume`)).status).toBe(400);
    expect((await call('GET', `/campaigns/${draft.id}/status?request_counter=-1`)).status).toBe(400);
  });
});
