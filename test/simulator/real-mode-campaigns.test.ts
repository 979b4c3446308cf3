import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay, withoutBench } from './capture-replay.js';
import { withSim, type Api, type Json } from './helpers.js';
import { shapeDiff } from './shape.js';

// Campaign counters and email rows in real mode, against the site-ny captures (README row
// "Campaigns"): `stats.total` is the emails sent, not recipients_count (524 vs 523), and
// `{id}/emails` lists those emails, `filter_type=click` the ones clicked.

interface TruthCampaign {
  id: number;
  status: string;
  recipientsCount: number;
  stats: { sent: number; delivered: number; opened: number; clicked: number };
}

const ny = (name: string) => loadCapture(`site-ny/${name}`);
const FINISHED = ['sent', 'archived'];

describe('real mode campaigns: stats and email rows as captured (site-ny)', () => {
  let sim: RunningSimulator;
  let call: Api;
  const campaigns = (): TruthCampaign[] => sim.truth().campaigns as unknown as TruthCampaign[];
  const archived = (): TruthCampaign => campaigns().find((c) => c.status === 'archived') as TruthCampaign;
  /** Every row of a listing, page by page. */
  const allRows = async (path: string, perPage: number): Promise<Json[]> => {
    const out: Json[] = [];
    for (let page = 1; ; page++) {
      const r = await call('GET', `${path}${path.includes('?') ? '&' : '?'}per_page=${perPage}&page=${page}`);
      out.push(...(r.json.emails.data as Json[]));
      if (r.json.emails.next_page_url === null) return out;
    }
  };

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 200, seed: 11, mode: 'real', timezone: 'America/New_York', now: () => Date.parse('2026-11-25T18:08:46Z') }));
  });
  afterAll(async () => {
    await sim.close();
  });

  it('with[]=stats: total and sent are the emails sent; a sent campaign counts one recipient more (524 vs 523)', async () => {
    const captured = ny('GET_campaigns_with_stats').body.campaigns.data.find((c: Json) => c.id === 2);
    expect([captured.recipients_count, captured.stats.total, captured.stats.sent]).toEqual([524, 523, 523]);
    const rows = (await call('GET', '/campaigns?with[]=stats&per_page=50')).json.campaigns.data as Json[];
    const finished = campaigns().filter((c) => FINISHED.includes(c.status));
    expect(finished.length).toBeGreaterThan(0);
    for (const t of finished) {
      const row = rows.find((r) => r.id === t.id);
      expect([t.id, row.recipients_count, row.stats.total, row.stats.sent]).toEqual([t.id, t.stats.sent + 1, t.stats.sent, t.stats.sent]);
    }
    expect(Object.keys(rows[0].stats)).toEqual(Object.keys(captured.stats));
  });

  it('stats.total agrees with the status figures; the estimate is recipients_count once sent', async () => {
    const rows = (await call('GET', '/campaigns?with[]=stats&per_page=50')).json.campaigns.data as Json[];
    for (const row of rows) {
      // overview_stats: the status figures without polling (a poll would advance a working campaign).
      const o = (await call('GET', `/campaigns/${row.id}/overview_stats`)).json;
      const statTotal = (o.stat as Json[]).reduce((n, s) => n + Number(s.total), 0);
      expect([row.id, row.status, statTotal, o.sent_count]).toEqual([row.id, row.status, row.stats.total, row.stats.sent]);
      if (FINISHED.includes(row.status)) {
        expect((o.stat as Json[]).map((s) => s.status)).not.toContain('pending');
        const e = (await call('GET', `/campaigns/${row.id}/estimated-recipients-count`)).json;
        expect(e.estimated_count).toBe(row.recipients_count);
      }
    }
    const t = archived();
    const o = (await call('GET', `/campaigns/${t.id}/overview_stats`)).json;
    expect([o.analytics.open.total, o.analytics.click.total]).toEqual([t.stats.opened, t.stats.clicked]);
  });

  it('emails: one row per email sent, embedding the contact, paged as captured', async () => {
    const t = archived();
    for (const name of ['GET_campaigns_id_emails_per_page_5', 'GET_campaigns_id_emails_filter_type_click_per_page_5']) {
      const c = ny(name);
      const r = await replay(sim, c, { path: `/campaigns/${t.id}/emails?${c.request.query_string}` });
      expectLike(c, r);
      expect([name, r.json.emails.data.length, r.json.failed_counts]).toEqual([name, 5, 0]);
      expect([name, shapeDiff(c.body.emails.data[0], r.json.emails.data[0])]).toEqual([name, []]);
      expect(Object.keys(r.json.emails.data[0])).toEqual(Object.keys(c.body.emails.data[0]));
      expect(Object.keys(r.json.emails.data[0].subscriber)).toEqual(Object.keys(c.body.emails.data[0].subscriber));
      expect(r.json.emails.next_page_url).toBe(`/wp-json/fluent-crm/v2/campaigns/${t.id}/emails?page=2`);
    }
    const page = (await call('GET', `/campaigns/${t.id}/emails?per_page=5`)).json.emails;
    expect(page).toMatchObject({ total: t.stats.sent, per_page: 5, current_page: 1, last_page: Math.ceil(t.stats.sent / 5), from: 1, to: 5 });
    for (const row of page.data as Json[]) {
      expect(row).toMatchObject({ campaign_id: String(t.id), email_type: 'campaign', email_body: '', subscriber_id: String(row.subscriber.id), email_address: row.subscriber.email });
      expect(['tags', 'lists'].some((k) => k in row.subscriber)).toBe(false);
    }
    const again = (await call('GET', `/campaigns/${t.id}/emails?per_page=5`)).json;
    expect(withoutBench(again).emails).toEqual(page);
  });

  it('emails: every row once; the rows agree with the counters; filter_type=click and view filter them', async () => {
    const t = archived();
    const rows = await allRows(`/campaigns/${t.id}/emails`, 40);
    expect(rows).toHaveLength(t.stats.sent);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    // Recipients are the first live contacts by id (the simulator does not record who was sent what).
    const live = sim
      .truth()
      .contacts.map((c) => c.id)
      .sort((a, b) => a - b);
    expect(rows.map((r) => r.subscriber.id)).toEqual(live.slice(0, rows.length));
    const statuses = (await call('GET', `/campaigns/${t.id}/overview_stats`)).json.stat as Json[];
    for (const s of statuses) expect([s.status, rows.filter((r) => r.status === s.status).length]).toEqual([s.status, Number(s.total)]);
    expect(rows.filter((r) => r.is_open === '1')).toHaveLength(t.stats.opened);
    const clicked = rows.filter((r) => r.click_counter !== null);
    expect(clicked).toHaveLength(t.stats.clicked);
    expect(clicked.every((r) => r.click_counter === '1' && r.is_open === '1' && r.status === 'sent')).toBe(true);
    const byClick = await allRows(`/campaigns/${t.id}/emails?filter_type=click`, 7);
    expect(byClick.map((r) => r.id)).toEqual(clicked.map((r) => r.id));
    const head = (await call('GET', `/campaigns/${t.id}/emails?filter_type=click&per_page=5`)).json.emails;
    expect([head.total, head.last_page]).toEqual([t.stats.clicked, Math.ceil(t.stats.clicked / 5)]);
    const byView = await allRows(`/campaigns/${t.id}/emails?filter_type=view`, 50);
    expect(byView.map((r) => r.id)).toEqual(rows.filter((r) => r.is_open === '1').map((r) => r.id));
    const past = (await call('GET', `/campaigns/${t.id}/emails?page=999`)).json.emails;
    expect([past.data, past.from, past.to]).toEqual([[], null, null]);
  });

  it('emails of a campaign still sending list its pending emails too; a draft has none', async () => {
    const working = campaigns().find((c) => c.status === 'working') as TruthCampaign;
    const e = (await call('GET', `/campaigns/${working.id}/emails?per_page=1`)).json.emails;
    expect(e.total).toBe(working.recipientsCount);
    const last = (await call('GET', `/campaigns/${working.id}/emails?per_page=1&page=${working.recipientsCount}`)).json.emails.data[0];
    expect(last.status).toBe('pending');
    const draft = campaigns().find((c) => c.status === 'draft') as TruthCampaign;
    expect((await call('GET', `/campaigns/${draft.id}/emails`)).json.emails).toMatchObject({ total: 0, last_page: 0, data: [] });
  });
});

describe('spec mode campaigns keep their counters', () => {
  it('with[]=stats: total stays recipients_count; emails stay an empty listing', async () => {
    const { sim, call } = await withSim({ contacts: 120, seed: 11 });
    try {
      const rows = (await call('GET', '/campaigns?with[]=stats&per_page=50')).json.campaigns.data as Json[];
      for (const row of rows) expect([row.id, row.stats.total]).toEqual([row.id, row.recipients_count]);
      expect((await call('GET', '/campaigns/1/emails')).json.emails.data).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});
