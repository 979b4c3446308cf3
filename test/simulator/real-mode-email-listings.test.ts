import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay } from './capture-replay.js';
import { withSim, type Api, type Json } from './helpers.js';

// The email rows of every campaign as `reports/emails` lists them, and a contact's own as its
// profile's `emails` panel does (site-ny README rows "dashboard-stats, emails" and "Contact
// activity"): the same rows as each campaign's `emails` listing, newest send first.

const ny = (name: string) => loadCapture(`site-ny/${name}`);
/** The campaign editor's admin-UI keys, which the simulator does not model (real-mode-captures.test.ts). */
const ADMIN_UI = new Set(['template_config', 'templates']);

describe('real mode: reports/emails and a contact’s emails (site-ny)', () => {
  let sim: RunningSimulator;
  let call: Api;
  /** Every row of an `emails` paginator, page by page. */
  const allRows = async (path: string, perPage: number): Promise<Json[]> => {
    const out: Json[] = [];
    for (let page = 1; ; page++) {
      const r = await call('GET', `${path}?per_page=${perPage}&page=${page}`);
      out.push(...(r.json.emails.data as Json[]));
      if (r.json.emails.next_page_url === null) return out;
    }
  };
  const campaignRows = async (): Promise<Json[]> => {
    const listed = (await call('GET', '/campaigns?per_page=100')).json.campaigns.data as Json[];
    return (await Promise.all(listed.map((c) => allRows(`/campaigns/${c.id}/emails`, 100)))).flat();
  };

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 120, seed: 11, mode: 'real', timezone: 'America/New_York', now: () => Date.parse('2026-11-25T18:08:46Z') }));
  });
  afterAll(async () => {
    await sim.close();
  });

  it('reports/emails lists every campaign’s rows once, with the captured shape, statuses only with page=1', async () => {
    const c = ny('GET_reports_emails');
    const first = await replay(sim, c);
    expectLike(c, first, ADMIN_UI);
    expect(first.json.statuses).toBeNull();
    const byCampaign = await campaignRows();
    expect(byCampaign.length).toBeGreaterThan(100);
    expect(first.json.emails.total).toBe(byCampaign.length);
    expect(first.json.emails.per_page).toBe(15);

    const paged = ny('GET_reports_emails_page_1_per_page_5');
    const five = await replay(sim, paged);
    expectLike(paged, five, ADMIN_UI);
    expect(five.json.emails.data).toHaveLength(5);
    const counts: Record<string, number> = {};
    for (const r of byCampaign) counts[r.status] = (counts[r.status] ?? 0) + 1;
    expect(five.json.statuses).toEqual(Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, String(n)])));

    const all = await allRows('/reports/emails', 40);
    const key = (r: Json) => `${r.campaign_id}:${r.id}`;
    expect(all.map(key).sort()).toEqual(byCampaign.map(key).sort());
    // Each row as its campaign's listing has it, plus the campaign it belongs to.
    const same = new Map(byCampaign.map((r) => [key(r), r]));
    for (const r of all) {
      const { campaign, ...row } = r;
      expect(row).toEqual(same.get(key(r)));
      expect(campaign.id).toBe(Number(r.campaign_id));
    }
    // Newest send first.
    const sentAt = all.map((r) => r.scheduled_at as string);
    expect([...sentAt].sort().reverse()).toEqual(sentAt);
  });

  it('a contact’s emails are its rows of each campaign, without the embeds', async () => {
    const byCampaign = await campaignRows();
    const c = ny('GET_subscribers_id_emails');
    let seen = 0;
    for (const contact of sim.truth().contacts.slice(0, 30)) {
      const r = await replay(sim, c, { path: `/subscribers/${contact.id}/emails` });
      const mine = byCampaign.filter((x) => x.subscriber_id === String(contact.id)).map(({ subscriber: _s, ...row }) => row);
      expect(r.json.emails.data.map((x: Json) => `${x.campaign_id}:${x.id}`).sort()).toEqual(mine.map((x) => `${x.campaign_id}:${x.id}`).sort());
      for (const row of r.json.emails.data as Json[]) expect(row).toEqual(mine.find((x) => x.id === row.id));
      if (mine.length > 0) {
        expectLike(c, r);
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(0);
    expect((await call('GET', '/subscribers/999999/emails')).json.emails.total).toBe(0);
  });

  it('DELETE removes the named rows from every listing; a contact’s route only its own', async () => {
    const contact = sim.truth().contacts[3]!;
    const mine = (await call('GET', `/subscribers/${contact.id}/emails`)).json.emails.data as Json[];
    expect(mine.length).toBeGreaterThan(1);
    const other = (await call('GET', `/subscribers/${sim.truth().contacts[4]!.id}/emails`)).json.emails.data[0] as Json;
    const before = (await call('GET', '/reports/emails?page=1')).json;
    // A contact's route ignores a row of another contact.
    expect((await call('DELETE', `/subscribers/${contact.id}/emails`, { email_ids: [mine[0].id, other.id] })).status).toBe(200);
    const after = (await call('GET', `/subscribers/${contact.id}/emails`)).json.emails.data as Json[];
    expect(after.map((r) => r.id)).toEqual(mine.slice(1).map((r) => r.id));
    const report = (await call('GET', '/reports/emails?page=1')).json;
    expect(report.emails.total).toBe(before.emails.total - 1);
    const campaignRows = await allRows(`/campaigns/${mine[0].campaign_id}/emails`, 100);
    expect(campaignRows.map((r) => r.id)).not.toContain(mine[0].id);
    expect(campaignRows.map((r) => r.id)).toContain(other.id);
    // reports/emails deletes any row; statuses count what is left.
    expect((await call('DELETE', '/reports/emails', { email_ids: [other.id] })).json.message).toBe('Selected emails has been deleted');
    const left = (await call('GET', '/reports/emails?page=1')).json;
    expect(left.emails.total).toBe(before.emails.total - 2);
    const sum = (st: Record<string, string>) => Object.values(st).reduce((n, v) => n + Number(v), 0);
    expect(sum(left.statuses)).toBe(left.emails.total);
    const all = await allRows('/reports/emails', 50);
    expect(all).toHaveLength(left.emails.total);
    expect(all.map((r) => r.id)).not.toContain(other.id);
  });
});
