import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLinks, linkOfClick, linkTotals } from '../../src/simulator/campaign-links.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { expectLike, loadCapture, replay } from './capture-replay.js';
import { withSim, type Api, type Json } from './helpers.js';

// Clicks per link (site-ny README rows "Campaigns" and "Contact activity"): a campaign's
// `link-report` splits its click counter over the links of its body, and a contact's `url-metrics`
// lists the link each of its clicked email rows went to, so that the two agree link by link.

const ny = (name: string) => loadCapture(`site-ny/${name}`);
const CAPTURED_BODY = ny('GET_campaigns_id').body.campaign.email_body as string;

describe('campaign links: the pure parts', () => {
  it('reads a body’s http(s) hrefs once each, in order, as the captured campaign has them', () => {
    expect(bodyLinks(CAPTURED_BODY)).toEqual(['https://example.test/launch', 'https://example.test/pricing']);
    expect(bodyLinks(`<a href='https://x.test/a?b=1&amp;c=2'>x</a> <a href="#top">t</a> <a href="mailto:a@x.test">m</a> <a class="btn" href="https://x.test/a?b=1&c=2">again</a>`)).toEqual([
      'https://x.test/a?b=1&c=2',
    ]);
    expect(bodyLinks('<p>no links</p>')).toEqual([]);
  });

  it('splits clicks as captured (77 over two links: 44 and 33) and spreads each click to one link, totals exact', () => {
    expect(linkTotals(77, 2)).toEqual([44, 33]);
    expect(linkTotals(1, 2)).toEqual([1, 0]);
    for (const links of [1, 2, 3, 5]) {
      for (const clicks of [0, 1, 2, 7, 40, 77, 1001]) {
        const totals = linkTotals(clicks, links);
        expect(totals.reduce((a, t) => a + t, 0)).toBe(clicks);
        const got = new Array<number>(links).fill(0);
        for (let u = 0; u < clicks; u++) got[linkOfClick(totals, u)]!++;
        expect([links, clicks, got]).toEqual([links, clicks, totals]);
      }
    }
  });
});

describe('real mode: link-report and url-metrics (site-ny)', () => {
  let sim: RunningSimulator;
  let call: Api;
  /** Every sent campaign's click counter and link-report, with the hrefs of its body. */
  let reports: { id: number; clicks: number; hrefs: string[]; links: Json[] }[];

  beforeAll(async () => {
    ({ sim, call } = await withSim({ contacts: 120, seed: 11, mode: 'real', timezone: 'America/New_York', now: () => Date.parse('2026-11-25T18:08:46Z') }));
    const listed = (await call('GET', '/campaigns?per_page=100&with[]=stats')).json.campaigns.data as Json[];
    const c = ny('GET_campaigns_id_link-report');
    reports = [];
    for (const camp of listed) {
      const r = await replay(sim, c, { path: `/campaigns/${camp.id}/link-report` });
      expectLike(c, r);
      reports.push({ id: camp.id, clicks: camp.stats.clicks, hrefs: bodyLinks(camp.email_body), links: r.json.links });
    }
  });
  afterAll(async () => {
    await sim.close();
  });

  it('link-report lists the body’s links with string totals that add up to the click counter, most clicked first', () => {
    const clicked = reports.filter((r) => r.clicks > 0);
    expect(clicked.length).toBeGreaterThan(2);
    for (const r of clicked) {
      expect(r.links.length).toBeGreaterThan(0);
      expect(r.links.map((l: Json) => Object.keys(l))).toEqual(r.links.map(() => ['total', 'url', 'id']));
      expect(r.links.every((l: Json) => typeof l.total === 'string' && r.hrefs.includes(l.url))).toBe(true);
      expect(r.links.reduce((n: number, l: Json) => n + Number(l.total), 0)).toBe(r.clicks);
      const totals = r.links.map((l: Json) => Number(l.total));
      expect([...totals].sort((a, b) => b - a)).toEqual(totals);
    }
    expect(clicked.some((r) => r.links.length === 2)).toBe(true);
    // Campaign 1 links two URLs, ids 1 and 2 as captured; a URL keeps its id in every campaign.
    const first = reports.find((r) => r.id === 1)!;
    expect(first.hrefs).toHaveLength(2);
    expect(first.hrefs.map((url) => first.links.find((l) => l.url === url)?.id)).toEqual([1, 2]);
    const ids = new Map<string, number>();
    for (const l of reports.flatMap((r) => r.links)) expect(ids.set(l.url, ids.get(l.url) ?? l.id).get(l.url)).toBe(l.id);
    expect(new Set(ids.values()).size).toBe(ids.size);
    // Campaigns without clicks list no link.
    for (const r of reports.filter((x) => x.clicks === 0)) expect(r.links).toEqual([]);
  });

  it('url-metrics has the captured shape, one link per clicked email row, and summed over contacts gives link-report', async () => {
    const c = ny('GET_subscribers_id_url-metrics');
    const sums = new Map<string, number>();
    let clickers = 0;
    for (const contact of sim.truth().contacts) {
      const r = await replay(sim, c, { path: `/subscribers/${contact.id}/url-metrics?per_page=100` });
      expect(r.status).toBe(200);
      const rows = r.json.urlMetrics.data as Json[];
      const emails = (await call('GET', `/subscribers/${contact.id}/emails?per_page=100`)).json.emails.data as Json[];
      expect([contact.id, rows.length]).toEqual([contact.id, emails.filter((e) => e.click_counter === '1').length]);
      if (rows.length === 0) continue;
      clickers++;
      expectLike(c, r);
      for (const row of rows) {
        expect(row).toEqual({ url: row.url, count: '1' });
        sums.set(row.url, (sums.get(row.url) ?? 0) + 1);
      }
    }
    expect(clickers).toBeGreaterThan(5);
    const reported = new Map<string, number>();
    for (const l of reports.flatMap((r) => r.links)) reported.set(l.url, (reported.get(l.url) ?? 0) + Number(l.total));
    expect(Object.fromEntries([...sums].sort())).toEqual(Object.fromEntries([...reported].sort()));
  });

  it('url-metrics pages as the other paginators; a contact with no click gets an empty one, an unknown id 404', async () => {
    const ids = sim.truth().contacts.map((x) => x.id as number);
    const counts = await Promise.all(ids.map(async (id) => (await call('GET', `/subscribers/${id}/url-metrics`)).json.urlMetrics.total as number));
    const busy = ids[counts.findIndex((n) => n >= 2)]!;
    const all = (await call('GET', `/subscribers/${busy}/url-metrics`)).json.urlMetrics;
    const second = (await call('GET', `/subscribers/${busy}/url-metrics?per_page=1&page=2`)).json.urlMetrics;
    expect(second).toMatchObject({ total: all.total, per_page: 1, current_page: 2, from: 2, to: 2, data: [all.data[1]] });
    expect(second.prev_page_url).toBe(`/wp-json/fluent-crm/v2/subscribers/${busy}/url-metrics?page=1`);

    const idle = ids[counts.indexOf(0)]!;
    const none = await call('GET', `/subscribers/${idle}/url-metrics`);
    expect([none.status, none.json.urlMetrics]).toEqual([200, { total: 0, per_page: 15, current_page: 1, last_page: 0, next_page_url: null, prev_page_url: null, from: null, to: null, data: [] }]);
    const unknown = await call('GET', '/subscribers/999999/url-metrics');
    expect([unknown.status, unknown.json.message]).toEqual([404, 'No query results for model [FluentCrm\\App\\Models\\Subscriber].']);
  });
});
