import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { segmentSelector } from '../../src/simulator/campaign-segment.js';
import type { RunningSimulator, TruthContact } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay, withoutBench } from './capture-replay.js';
import { withSim, type Api, type Json } from './helpers.js';

// fluentcrm-2.9's campaign and funnel creation and its campaign segment preview, replayed from
// the captures (README.md "Envelopes" and "Campaign / funnel / company misses"; site-ny/README.md
// "Campaigns") against real mode, with the state each write leaves behind.

/** The clock of the UTC site's creation samples (POST_campaigns, POST_funnels: 04:55:58). */
const CAPTURED_AT = Date.parse('2026-11-21T04:55:58Z');

const byIdDesc = (a: number, b: number): number => b - a;

describe('real mode: creation and the segment preview as captured', () => {
  let sim: RunningSimulator;
  let call: Api;
  const contacts = (): TruthContact[] => sim.truth().contacts;

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 60, seed: 4, mode: 'real', now: () => CAPTURED_AT }));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('POST /campaigns answers the bare new campaign without __bench, and 422 for a title already taken', async () => {
    const dup = loadCapture('POST_campaigns_duplicate_title');
    // A seeded campaign is titled "November Newsletter": the captured 422 as it stands.
    const taken = await replay(sim, dup);
    expect({ status: taken.status, body: taken.json }).toEqual({ status: dup.status, body: dup.body });
    const seeded = sim.truth().campaigns.find((x) => x.title === 'November Newsletter')!.id as number;
    expect((await call('DELETE', `/campaigns/${seeded}`)).status).toBe(200);

    const c = loadCapture('POST_campaigns');
    const r = await replay(sim, c);
    expectLike(c, r);
    const id = r.json.id as number;
    expect(r.json).toEqual({ ...c.body, id });
    expect(
      sim
        .truth()
        .campaigns.filter((x) => x.title === 'November Newsletter')
        .map((x) => [x.id, x.status]),
    ).toEqual([[id, 'draft']]);
    const shown = await call('GET', `/campaigns/${id}`);
    expect(shown.json.campaign).toMatchObject({ id, title: 'November Newsletter', slug: 'november-newsletter', status: 'draft', recipients_count: 0, created_at: '2026-11-21 04:55:58' });
    expect((await call('GET', '/campaigns?per_page=100')).json.campaigns.data.map((x: Json) => x.id)).toContain(id);

    // Titles are unique without regard to case, as MySQL's collation compares them.
    for (const title of ['November Newsletter', 'NOVEMBER newsletter']) {
      const again = await replay(sim, dup, { body: { title } });
      expect({ status: again.status, body: again.json }).toEqual({ status: dup.status, body: dup.body });
    }
    const missing = await call('POST', '/campaigns', { description: 'no title' });
    expect({ status: missing.status, body: missing.json }).toEqual({ status: 422, body: { title: { required: 'The title field is required.' } } });
    expect(sim.truth().campaigns.filter((x) => x.title === 'November Newsletter')).toHaveLength(1);
  });

  it('POST /funnels creates a draft and POST /funnels/{id}/sequences saves its steps, as captured and as later GETs show', async () => {
    const c = loadCapture('POST_funnels');
    const r = await replay(sim, c);
    expectLike(c, r);
    const id = r.json.funnel.id as number;
    expect(withoutBench(r.json)).toEqual(withoutBench({ ...c.body, funnel: { ...c.body.funnel, id } }));
    const draft = (await call('GET', `/funnels/${id}`)).json.funnel;
    expect(draft).toMatchObject({ id, status: 'draft', settings: [], conditions: [], description: 'Tags new users as VIP', sequences: [] });

    const s = loadCapture('POST_funnels_id_sequences');
    const saved = await replay(sim, s, { path: `/funnels/${id}/sequences` });
    expectLike(s, saved);
    const stepId = saved.json.sequences[0].id as number;
    expect(withoutBench(saved.json)).toEqual(withoutBench({ ...s.body, sequences: s.body.sequences.map((x: Json) => ({ ...x, id: stepId, funnel_id: String(id) })) }));

    // GET_funnels_id was taken after this save: its own settings and conditions, published, and
    // the description gone (the save sent none).
    const captured = loadCapture('GET_funnels_id').body.funnel;
    const keys = ['type', 'title', 'trigger_name', 'status', 'conditions', 'settings', 'created_by', 'created_at', 'updated_at', 'description'];
    const pick = (o: Json): Json => Object.fromEntries(keys.map((k) => [k, o[k]]));
    const funnel = (await call('GET', `/funnels/${id}`)).json.funnel;
    expect(pick(funnel)).toEqual(pick(captured));
    expect(funnel.sequences.map((x: Json) => [x.id, x.action_name, x.title, x.settings])).toEqual([[stepId, 'add_contact_to_tag', 'Apply VIP tag', { tags: [1] }]]);
    const truth = sim.truth().funnels.find((f) => f.id === id)!;
    expect([truth.status, (truth.steps as Json[]).map((x) => x.id)]).toEqual(['published', [stepId]]);
    const listed = (await call('GET', '/funnels?per_page=100')).json.funnels.data.find((f: Json) => f.id === id);
    expect(pick(listed)).toEqual(pick(captured));
  });

  it('a later save keeps a step sent by id, puts a wait on the step after it, and drops the steps not sent', async () => {
    const f = (await call('POST', '/funnels', { funnel: { title: 'Nurture', trigger_name: 'user_register' } })).json.funnel;
    const body = (steps: unknown[]): Json => ({ funnel_settings: '{}', conditions: '[]', status: 'draft', sequences: JSON.stringify(steps) });
    const first = (await call('POST', `/funnels/${f.id}/sequences`, body([{ action_name: 'add_contact_to_tag', type: 'action', title: 'Tag', settings: { tags: [2] } }]))).json.sequences[0];
    const wait = { action_name: 'fluentcrm_wait_times', type: 'action', title: 'Wait 2 days', settings: { wait_type: 'unit_wait', wait_time_amount: 2, wait_time_unit: 'days' } };
    const again = await call(
      'POST',
      `/funnels/${f.id}/sequences`,
      body([{ ...first, title: 'Tag again' }, wait, { action_name: 'add_contact_to_list', type: 'action', title: 'List', settings: { lists: [1] } }]),
    );
    const rows = again.json.sequences as Json[];
    expect(rows.map((x) => [x.title, x.sequence, x.delay, x.c_delay])).toEqual([
      ['Tag again', '1', '0', '0'],
      ['Wait 2 days', '2', '0', '0'],
      ['List', '3', '172800', '172800'],
    ]);
    expect(rows[0].id).toBe(first.id);
    const cleared = await call('POST', `/funnels/${f.id}/sequences`, body([]));
    expect([cleared.status, cleared.json.sequences, (await call('GET', `/funnels/${f.id}`)).json.funnel.sequences]).toEqual([200, [], []]);
  });

  it('saving steps: an unknown funnel is the captured 404, and an unreadable payload changes nothing', async () => {
    const s = loadCapture('POST_funnels_id_sequences');
    const miss = loadCapture('GET_funnels_999999_subscribers');
    const unknown = await replay(sim, s, { path: '/funnels/999999/sequences' });
    expect({ status: unknown.status, body: unknown.json }).toEqual({ status: miss.status, body: miss.body });
    const id = sim.truth().funnels[0]!.id as number;
    const before = (await call('GET', `/funnels/${id}`)).json.funnel;
    const bad = await replay(sim, s, { path: `/funnels/${id}/sequences`, body: { ...(s.request.body as object), sequences: 'not json' } });
    expect([bad.status, bad.json.code]).toEqual([500, 'internal_server_error']);
    expect((await call('GET', `/funnels/${id}`)).json.funnel).toEqual(before);
    const noTitle = await call('POST', '/funnels', { funnel: { description: 'x' } });
    expect({ status: noTitle.status, body: noTitle.json }).toEqual({
      status: 422,
      body: { title: { required: 'The title field is required.' }, trigger_name: { required: 'The trigger name field is required.' } },
    });
  });

  it('GET /campaigns/{id}/contacts-by-segment lists the subscribed contacts the segment selects now, newest first', async () => {
    const c = loadCapture('site-ny/GET_campaigns_id_contacts-by-segment_per_page_5');
    const campaign = sim.truth().campaigns.find((x) => x.status === 'sent')!;
    const path = `/campaigns/${campaign.id}/contacts-by-segment`;
    // The simulator's campaigns are sent to every list and tag: every subscribed contact.
    const selected = (): number[] =>
      contacts()
        .filter((x) => x.status === 'subscribed')
        .map((x) => x.id)
        .sort(byIdDesc);
    const r = await replay(sim, c, { path: `${path}?per_page=5` });
    expectLike(c, r);
    const want = selected();
    expect({ ...r.json.subscribers, data: r.json.subscribers.data.map((x: Json) => x.id) }).toEqual({
      total: want.length,
      per_page: 5,
      current_page: 1,
      last_page: Math.ceil(want.length / 5),
      next_page_url: `/wp-json/fluent-crm/v2${path}?page=2`,
      prev_page_url: null,
      from: 1,
      to: 5,
      data: want.slice(0, 5),
    });
    const row = r.json.subscribers.data[0];
    expect(Object.keys(row)).toEqual(Object.keys(c.body.subscribers.data[0]));
    const truth = contacts().find((x) => x.id === row.id)!;
    expect([row.lists.map((x: Json) => x.id), row.tags.map((x: Json) => x.id)]).toEqual([truth.lists, truth.tags]);

    // The segment as it is now, not the recipients: one contact unsubscribing leaves the listing.
    expect((await call('PUT', `/subscribers/${want[0]}`, { status: 'unsubscribed' })).status).toBe(200);
    const now = await call('GET', `${path}?per_page=1000`);
    expect(now.json.subscribers.data.map((x: Json) => x.id)).toEqual(selected());
    expect(now.json.subscribers.total).toBe(want.length - 1);
    expect(sim.truth().campaigns.find((x) => x.id === campaign.id)!.recipientsCount).toBe(campaign.recipientsCount);

    const byEmail = await call('GET', `${path}?per_page=1000&sort_by=email&sort_type=ASC`);
    const emails = contacts()
      .filter((x) => x.status === 'subscribed')
      .map((x) => x.email)
      .sort();
    expect(byEmail.json.subscribers.data.map((x: Json) => x.email)).toEqual(emails);
    const miss = loadCapture('GET_campaigns_999999');
    const unknown = await call('GET', '/campaigns/999999/contacts-by-segment');
    expect({ status: unknown.status, body: unknown.json }).toEqual({ status: miss.status, body: miss.body });
  });

  it('the segment rules: lists and tags per row, rows as alternatives, exclusions, subscribed contacts only', () => {
    const all = contacts();
    const [list, tag, other] = [all[0]!.lists[0] ?? 1, all[1]!.tags[0] ?? 1, all[2]!.tags[0] ?? 2];
    const select = (settings: Record<string, unknown>): number[] =>
      all.filter((x) => segmentSelector(settings)({ ...x, companyIds: x.company_ids, stats: { emails: 0, opens: 0, clicks: 0 } })).map((x) => x.id);
    const counted = (keep: (x: TruthContact) => boolean): number[] => all.filter((x) => x.status === 'subscribed' && keep(x)).map((x) => x.id);
    const settings = {
      sending_filter: 'list_tag',
      subscribers: [
        { list: String(list), tag: 'all' },
        { list: 'all', tag: tag },
        { list: 5, tag: null },
      ],
      excludedSubscribers: [{ list: 'all', tag: other }],
    };
    const want = counted((x) => (x.lists.includes(list) || x.tags.includes(tag)) && !x.tags.includes(other));
    expect(want.length).toBeGreaterThan(0);
    expect(select(settings)).toEqual(want);
    expect(select({ sending_filter: 'list_tag', subscribers: [{ list, tag }], excludedSubscribers: [{ list: null, tag: null }] })).toEqual(
      counted((x) => x.lists.includes(list) && x.tags.includes(tag)),
    );
    expect(select({ subscribers: [{ list: 'all', tag: 'all' }] })).toEqual(counted(() => true));
    expect(select({ sending_filter: 'dynamic_segment', subscribers: [{ list: 'all', tag: 'all' }] })).toEqual([]);
  });
});
