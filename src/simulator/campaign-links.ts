import { EmailRows, isMarked } from './campaign-emails.js';
import { modelMissing } from './funnel-book.js';
import type { RouteCtx } from './http-types.js';
import type { Marketing } from './marketing.js';
import type { CampaignRec } from './model.js';
import { paginator, readPaging } from './paging.js';

/** An anchor's href, quoted either way (bodies are editor HTML, not arbitrary markup). */
const HREF = /<a\b[^>]*?\shref\s*=\s*(["'])(.*?)\1/gis;

/**
 * The links of a campaign body that clicks are counted on: each absolute http(s) href once, in
 * body order. Only those can stand behind a click redirect (an in-page anchor, `mailto:` or an
 * unrendered smart code cannot), and the plugin counts clicks per URL, not per anchor.
 */
export function bodyLinks(body: string): string[] {
  const out: string[] = [];
  for (const m of body.matchAll(HREF)) {
    const url = (m[2] ?? '').trim().replace(/&amp;/g, '&');
    if (/^https?:\/\/\S+$/i.test(url) && !out.includes(url)) out.push(url);
  }
  return out;
}

/**
 * The plugin numbers each distinct URL once, site-wide and for good (site-ny's campaigns 1 and 2
 * share one body, and link-report shows its links as ids 1 and 2). Kept per simulator, beside its
 * campaigns, so that deleting a campaign renumbers nothing; URLs get ids in campaign id order, so
 * the seed's are the same on every run and a later campaign's new URLs come after them.
 */
function urlIds(m: Marketing): Map<string, number> {
  const ids = m.linkIds;
  for (const c of [...m.campaigns.values()].sort((a, b) => a.id - b.id)) {
    for (const url of bodyLinks(c.emailBody)) if (!ids.has(url)) ids.set(url, ids.size + 1);
  }
  return ids;
}

/**
 * How a campaign's clicks split over its links: link j (0-based, body order) weighs L + 2 - j,
 * so the first link draws the most (site-ny campaign 1: 77 clicks over two links, 44 and 33, i.e.
 * 4:3). Rounded cumulative cuts make the totals add up to the clicks exactly, and a single click
 * goes to the first link.
 */
export function linkTotals(clicks: number, links: number): number[] {
  const weights = Array.from({ length: links }, (_, j) => links + 2 - j);
  const sum = weights.reduce((a, w) => a + w, 0);
  let [before, cut] = [0, 0];
  return weights.map((w) => {
    before += w;
    const next = Math.round((clicks * before) / sum);
    const total = next - cut;
    cut = next;
    return total;
  });
}

/**
 * The link the u-th click (0-based, among a campaign's clicked rows) went to. Each link's clicks
 * spread evenly over the clicks the links before it left, so every link's clickers are scattered
 * over the row list rather than taking one block of it, and each link gets exactly its total.
 */
export function linkOfClick(totals: readonly number[], u: number): number {
  let [rank, left] = [u, totals.reduce((a, t) => a + t, 0)];
  for (let j = 0; j < totals.length - 1; j++) {
    const t = totals[j] ?? 0;
    if (isMarked(left, t, rank)) return j;
    // Its place among the clicks this link did not take.
    rank -= Math.floor(((rank + 1) * t) / left);
    left -= t;
  }
  return totals.length - 1;
}

interface CampaignClicks {
  rows: EmailRows;
  links: { url: string; id: number }[];
  totals: number[];
}

/**
 * A campaign's clicked rows and links. The plugin keeps its click rows apart from the email rows,
 * so rows deleted through DELETE .../emails still count here. The clicks are the rows the `click`
 * filter lists: the click counter, unless fewer contacts are left than the campaign emailed.
 */
function campaignClicks(ctx: RouteCtx, c: CampaignRec, ids: ReadonlyMap<string, number>): CampaignClicks {
  const rows = new EmailRows(c, ctx.state.contacts.size);
  const urls = bodyLinks(c.emailBody);
  return { rows, links: urls.map((url) => ({ url, id: ids.get(url) ?? 0 })), totals: linkTotals(rows.clicked, urls.length) };
}

/**
 * GET /campaigns/{id}/link-report in real mode: clicks per link of the campaign's body, as the
 * plugin groups its click rows by URL (total as a string, most clicked first, a link nobody
 * clicked absent). A campaign whose body has no link lists none, whatever its click counter.
 */
export function linkReportBody(ctx: RouteCtx, c: CampaignRec): Record<string, unknown> {
  const { links, totals } = campaignClicks(ctx, c, urlIds(ctx.marketing));
  const listed = links.map((l, j) => ({ ...l, total: totals[j] ?? 0 })).filter((l) => l.total > 0);
  listed.sort((a, b) => b.total - a.total || a.id - b.id);
  return { links: listed.map((l) => ({ total: String(l.total), url: l.url, id: l.id })) };
}

/**
 * GET /subscribers/{id}/url-metrics in real mode: the contact's click rows, one per campaign whose
 * email it clicked (each clicked row's click went to one link, as site-ny's 77 clicked rows make
 * 77 link clicks), `count` the plugin's counter as a string. The plugin lists them by row id
 * descending, and click rows are written as contacts click, so a later send's come first. An
 * unknown contact is the plugin's findOrFail answer (not captured).
 */
export function contactUrlMetricsBody(ctx: RouteCtx, contactId: number): Record<string, unknown> {
  if (!ctx.state.contacts.has(contactId)) throw modelMissing('Subscriber', 'subscriber');
  const k = ctx.state.contacts.lowerBound(contactId);
  const ids = urlIds(ctx.marketing);
  const sendOf = (c: CampaignRec): number => c.scheduledAt ?? c.updatedAt;
  const campaigns = [...ctx.marketing.campaigns.values()].sort((a, b) => sendOf(b) - sendOf(a) || b.id - a.id);
  const data = campaigns.flatMap((c) => {
    const { rows, links, totals } = campaignClicks(ctx, c, ids);
    if (links.length === 0 || !rows.isClicked(k)) return [];
    const link = links[linkOfClick(totals, rows.clickRank(k))];
    return link ? [{ url: link.url, count: '1' }] : [];
  });
  const paging = readPaging(ctx, 15);
  const offset = (paging.page - 1) * paging.perPage;
  return { urlMetrics: paginator(ctx, paging, data.length, data.slice(offset, offset + paging.perPage)) };
}
