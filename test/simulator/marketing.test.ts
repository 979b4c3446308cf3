import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  ({ sim, call } = await withSim({ contacts: 200, seed: 21 }));
});
afterAll(async () => {
  await sim.close();
});

const byStatus = (status: string): Json => sim.truth().campaigns.find((c) => c.status === status);

describe('Campaigns', () => {
  it('lists campaigns sorted by sort_by/sort_type; with[]=stats adds stats', async () => {
    const r = await call('GET', '/campaigns?sort_by=id&sort_type=ASC&per_page=50');
    expect(r.status).toBe(200);
    const data = r.json.campaigns.data as Json[];
    expect(data.map((c) => c.id)).toEqual([...data.map((c) => c.id)].sort((a, b) => a - b));
    expect(data[0]).not.toHaveProperty('stats');
    for (const k of ['id', 'title', 'slug', 'status', 'email_subject', 'email_pre_header', 'email_body', 'recipients_count', 'scheduled_at', 'design_template', 'settings', 'created_at', 'updated_at'])
      expect(data[0]).toHaveProperty(k);
    const withStats = await call('GET', '/campaigns?with[]=stats');
    expect(withStats.json.campaigns.data[0].stats).toMatchObject({ sent: expect.any(Number) });
    expect(data.filter((c) => c.status === 'sent').every((c) => c.scheduled_at === null)).toBe(true);
  });

  it('GET /campaigns/{id}; unknown id is 404', async () => {
    expect((await call('GET', '/campaigns/1')).json.campaign.id).toBe(1);
    const miss = await call('GET', '/campaigns/9999');
    expect(miss.status).toBe(404);
    expect(isSpecError(miss.json, 404, 'rest_post_invalid_id')).toBe(true);
  });

  it('pause is allowed only in status working (else 400 rest_invalid_param); resume a paused campaign', async () => {
    const draft = byStatus('draft');
    const bad = await call('POST', `/campaigns/${draft.id}/pause`);
    expect(bad.status).toBe(400);
    expect(isSpecError(bad.json, 400, 'rest_invalid_param')).toBe(true);
    const working = byStatus('working');
    expect((await call('POST', `/campaigns/${working.id}/pause`)).status).toBe(200);
    expect(sim.truth().campaigns.find((c) => c.id === working.id)?.status).toBe('paused');
    expect((await call('POST', `/campaigns/${working.id}/resume`)).status).toBe(200);
    expect(sim.truth().campaigns.find((c) => c.id === working.id)?.status).toBe('working');
  });

  it('duplicate, title (required), delete', async () => {
    const dup = await call('POST', '/campaigns/1/duplicate');
    const id = dup.json.campaign.id;
    expect(dup.json.campaign.status).toBe('draft');
    expect((await call('PUT', `/campaigns/${id}/title`, {})).status).toBe(400);
    await call('PUT', `/campaigns/${id}/title`, { title: 'Renamed copy' });
    expect(sim.truth().campaigns.find((c) => c.id === id)?.title).toBe('Renamed copy');
    await call('DELETE', `/campaigns/${id}`);
    expect((await call('GET', `/campaigns/${id}`)).status).toBe(404);
  });

  it('status report: shape; every 4th request_counter cleans up; a working campaign is archived when done', async () => {
    const working = byStatus('working');
    const r1 = await call('GET', `/campaigns/${working.id}/status?request_counter=1`);
    expect(r1.json).toMatchObject({ current_timestamp: expect.any(String), stat: expect.any(Array), sent_count: expect.any(Number) });
    for (const k of [
      'id',
      'title',
      'status',
      'recipients_count',
      'scheduled_at',
      'settings',
      'sent_by',
      'open_tracking_status',
      'click_tracking_status',
      'scheduling_range',
      'created_at',
      'updated_at',
    ])
      expect(r1.json.campaign).toHaveProperty(k);
    expect(r1.json.campaign.status).toBe('working');
    const r2 = await call('GET', `/campaigns/${working.id}/status?request_counter=2`);
    expect(r2.json.sent_count).toBeGreaterThan(r1.json.sent_count);
    await call('GET', `/campaigns/${working.id}/status?request_counter=3`);
    const r4 = await call('GET', `/campaigns/${working.id}/status?request_counter=4`);
    expect(r4.json.campaign.status).toBe('archived');
    expect(r4.json.sent_count).toBe(r4.json.campaign.recipients_count);
    expect(r4.json.analytics).toMatchObject({ open: { total: expect.any(Number), subtitle: expect.any(String) }, click: { total: expect.any(Number) } });
    expect((await call('GET', '/campaigns/9999/status')).status).toBe(404);
  });

  it('templates: paginator per_page 15, types[] filter, both sort parameter names', async () => {
    const r = await call('GET', '/templates');
    expect(r.json.templates.per_page).toBe(15);
    expect(r.json.templates.data[0]).toHaveProperty('ID');
    const drafts = await call('GET', '/templates?types[]=draft');
    expect(drafts.json.templates.data.every((t: Json) => t.post_status === 'draft')).toBe(true);
    const a = await call('GET', '/templates?order_by=ID&order_type=asc');
    const b = await call('GET', '/templates?orderBy=ID&order=asc');
    expect(a.json.templates.data.map((t: Json) => t.ID)).toEqual(b.json.templates.data.map((t: Json) => t.ID));
    expect(a.json.templates.data[0].ID).toBeLessThan(a.json.templates.data[1].ID);
  });

  it('sequences: list with stats, get with emails, subscribers paginator, update, 403 without email capability', async () => {
    const r = await call('GET', '/sequences?with[]=stats');
    expect(r.json.sequences.per_page).toBe(15);
    expect(r.json.sequences.data[0].stats).toMatchObject({ emails: expect.any(Number), subscribers: expect.any(Number), revenue: { amount: expect.any(String), currency: expect.any(String) } });
    const one = await call('GET', '/sequences/1?with[]=sequence_emails');
    expect(one.json.sequence.type).toBe('email_sequence');
    expect(one.json.sequence_emails[1]).toMatchObject({ type: 'sequence_mail', parent_id: '1', settings: { timings: { delay_unit: 'days' } } });
    const subs = await call('GET', '/sequences/1/subscribers');
    expect(subs.json.subscribers.per_page).toBe(15);
    expect((await call('PUT', '/sequences/1', { title: 'Onboarding v2' })).json.sequence.title).toBe('Onboarding v2');
    expect((await call('GET', '/sequences/999')).status).toBe(404);
  });
});

describe('Funnels', () => {
  it('lists funnels (funnels array with total/per_page/current_page/last_page); with[] options; ISO timestamps', async () => {
    const r = await call('GET', '/funnels?with[]=subscribers_count&with[]=triggers');
    expect(Array.isArray(r.json.funnels)).toBe(true);
    expect(r.json).toMatchObject({ total: expect.any(Number), per_page: 10, current_page: 1, last_page: 1 });
    expect(r.json.triggers).toBeDefined();
    const f = r.json.funnels.find((x: Json) => x.id === 1);
    expect(f.subscribers_count).toBe(sim.truth().funnelSubscribers.filter((s) => s.funnelId === 1).length);
    expect(f.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect((await call('GET', '/funnels')).json.triggers).toBeUndefined();
    const paused = await call('GET', '/funnels?status=paused');
    expect(paused.json.funnels.every((x: Json) => x.status === 'paused')).toBe(true);
  });

  it('status change accepts published, draft, paused only (else 400 rest_invalid_param)', async () => {
    expect((await call('PUT', '/funnels/2/status', { status: 'paused' })).status).toBe(200);
    expect((await call('GET', '/funnels/2')).json.funnel.status).toBe('paused');
    const bad = await call('PUT', '/funnels/2/status', { status: 'archived' });
    expect(bad.status).toBe(400);
    expect(isSpecError(bad.json, 400, 'rest_invalid_param')).toBe(true);
  });

  it('subscribers: status filters incl. all/pending/waiting, sequence_id, with[] funnel and sequences', async () => {
    const truth = sim.truth().funnelSubscribers.filter((s) => s.funnelId === 1) as Json[];
    const all = await call('GET', '/funnels/1/subscribers?status=all&per_page=500');
    expect(all.json.funnel_subscribers.total).toBe(truth.length);
    expect(all.json.funnel_subscribers.per_page).toBe(500);
    const def = await call('GET', '/funnels/1/subscribers');
    expect(def.json.funnel_subscribers.per_page).toBe(15);
    for (const st of ['active', 'completed', 'cancelled']) {
      const r = await call('GET', `/funnels/1/subscribers?status=${st}&per_page=500`);
      expect(r.json.funnel_subscribers.total).toBe(truth.filter((s) => s.status === st).length);
    }
    const pending = await call('GET', '/funnels/1/subscribers?status=pending&per_page=500');
    expect(pending.json.funnel_subscribers.data.every((s: Json) => s.status === 'active' && s.last_sequence_id === null)).toBe(true);
    const waiting = await call('GET', '/funnels/1/subscribers?status=waiting&per_page=500');
    expect(waiting.status).toBe(200);
    const stepId = truth.find((s) => s.metrics.length > 0)?.metrics[0].sequenceId;
    const bySeq = await call('GET', `/funnels/1/subscribers?sequence_id=${stepId}&per_page=500`);
    expect(bySeq.json.funnel_subscribers.total).toBe(truth.filter((s) => s.metrics.some((m: Json) => m.sequenceId === stepId)).length);
    const withs = await call('GET', '/funnels/1/subscribers?with[]=funnel&with[]=sequences');
    expect(withs.json.funnel.id).toBe(1);
    expect(withs.json.sequences.length).toBeGreaterThan(0);
    expect((await call('GET', '/funnels/1/subscribers?status=bogus')).status).toBe(400);
    expect((await call('GET', '/funnels/999/subscribers')).status).toBe(404);
  });

  it('add (409 subscriber_already_exists when active), single subscriber with metrics, remove', async () => {
    const inFunnel = new Set(
      sim
        .truth()
        .funnelSubscribers.filter((s) => s.funnelId === 1)
        .map((s) => s.subscriberId as number),
    );
    const outside = sim.truth().contacts.find((c) => !inFunnel.has(c.id))?.id as number;
    const add = await call('POST', '/funnels/1/subscribers', { subscribers: [outside] });
    expect(add.status).toBe(200);
    const again = await call('POST', '/funnels/1/subscribers', { subscribers: [outside] });
    expect(again.status).toBe(409);
    expect(isSpecError(again.json, 409, 'subscriber_already_exists')).toBe(true);
    sim.mutate.advanceFunnel(1, outside);
    const one = await call('GET', `/funnels/1/subscribers/${outside}`);
    expect(one.json.funnel_subscriber.subscriber_id).toBe(outside);
    expect(one.json.funnel_subscriber.metrics).toHaveLength(1);
    expect(one.json.funnel_subscriber.metrics[0]).toMatchObject({ funnel_id: 1, subscriber_id: outside, benchmark_value: expect.any(Number) });
    expect(Array.isArray(one.json.sequences)).toBe(true);
    expect((await call('DELETE', `/funnels/1/subscribers/${outside}`)).status).toBe(200);
    expect((await call('GET', `/funnels/1/subscribers/${outside}`)).status).toBe(404);
  });

  it('sequences endpoints, duplicate and delete (removes subscriber progress)', async () => {
    const seqs = await call('GET', '/funnels/1/sequences');
    const step = seqs.json.sequences[0];
    expect(step).toMatchObject({ id: expect.any(Number), funnel_id: 1, action_name: expect.any(String), children: { yes: [], no: [] } });
    expect((await call('GET', `/funnels/1/sequences/${step.id}`)).json.sequence.id).toBe(step.id);
    const dup = await call('POST', '/funnels/1/duplicate');
    expect(dup.json.funnel.status).toBe('draft');
    await call('DELETE', '/funnels/1');
    expect((await call('GET', '/funnels/1')).status).toBe(404);
    expect(sim.truth().funnelSubscribers.some((s) => s.funnelId === 1)).toBe(false);
  });
});

describe('Forms', () => {
  it('GET /forms/{id}/entries: entries {data, page, per_page 10, total, last_page} and form {id, title}; search; unknown form 404', async () => {
    const r = await call('GET', '/forms/1/entries');
    expect(r.status).toBe(200);
    expect(r.json.form).toEqual({ id: 1, title: expect.any(String) });
    expect(r.json.entries).toMatchObject({ page: 1, per_page: 10, total: expect.any(Number), last_page: expect.any(Number) });
    expect(r.json.entries.data).toHaveLength(10);
    const e = r.json.entries.data[0];
    for (const k of ['id', 'serial_number', 'user_id']) expect(typeof e[k]).toBe('number');
    for (const k of ['status', 'created_at', 'browser', 'device', 'ip', 'entry_url']) expect(typeof e[k]).toBe('string');
    expect(Object.values(e.response).every((v) => typeof v === 'string')).toBe(true);
    const email = e.response.email as string;
    const found = await call('GET', `/forms/1/entries?search=${encodeURIComponent(email)}`);
    expect(found.json.entries.total).toBe(1);
    const page2 = await call('GET', '/forms/1/entries?page=2&per_page=5');
    expect(page2.json.entries.data[0].id).toBe(r.json.entries.data[5].id);
    expect((await call('GET', '/forms/99/entries')).status).toBe(404);
  });
});
