import { createHash } from 'node:crypto';
import type { RouteCtx } from './http-types.js';
import { emailRowCount } from './email-row-count.js';
import { campaignJson } from './marketing-serialize.js';
import type { CampaignRec } from './model.js';
import { paginator, queryArray, readPaging } from './paging.js';

/**
 * Row ids number one table across campaigns (campaign 1's are 1, 2, ... as captured); the span is
 * above the 5,000,000 contacts the simulator seeds at most.
 */
const ROW_ID_SPAN = 10_000_000;

/** Row k (0-based) of n is one of m marked rows, spread evenly: no row list needs storing. */
export const isMarked = (n: number, m: number, k: number): boolean => Math.floor(((k + 1) * m) / n) > Math.floor((k * m) / n);
/** The index of the t-th (0-based) marked row, and the rank of marked row k. */
const nthMarked = (n: number, m: number, t: number): number => Math.ceil(((t + 1) * n) / m) - 1;
const rankOf = (n: number, m: number, k: number): number => Math.floor(((k + 1) * m) / n) - 1;

/**
 * Which rows exist and how they stand, from the campaign's counters alone (the simulator may hold
 * 1,000,000 contacts, so it stores no row per email). The simulator does not record who received
 * a campaign: row k went to the k-th live contact by id, whatever its status now (the seed's
 * campaigns reach up to 90 % of contacts, more than are subscribed, and a send is followed by
 * bounces and unsubscribes). Rows are delivered, then bounced, then pending, matching the status
 * report's `stat`; opens spread over the delivered rows and clicks over the opened ones, so the
 * `view` and `click` filters count the campaign's own open and click counters.
 */
export class EmailRows {
  /** Rows listed: those the counters give, less the deleted ones. */
  readonly total: number;
  /** Rows the counters give (row k, 0-based, for k below it). */
  readonly derived: number;
  readonly delivered: number;
  readonly opened: number;
  readonly clicked: number;
  /** The row indices of this campaign deleted through DELETE .../emails. */
  readonly #gone: ReadonlySet<number>;

  constructor(
    readonly c: CampaignRec,
    liveContacts: number,
    deletedRowIds: ReadonlySet<number> = new Set(),
  ) {
    // Deletes move rows onto the next live contacts; only when fewer contacts than emails are
    // left are there fewer rows than the counters say.
    this.derived = Math.min(emailRowCount(c), liveContacts);
    this.delivered = Math.min(c.stats.delivered, c.stats.sent, this.derived);
    this.opened = Math.min(c.stats.opened, this.delivered);
    this.clicked = Math.min(c.stats.clicked, this.opened);
    const gone = new Set<number>();
    for (const id of deletedRowIds) {
      const k = id - 1 - (c.id - 1) * ROW_ID_SPAN;
      if (k >= 0 && k < this.derived) gone.add(k);
    }
    this.#gone = gone;
    this.total = this.derived - gone.size;
  }

  rowId(k: number): number {
    return (this.c.id - 1) * ROW_ID_SPAN + k + 1;
  }

  has(k: number): boolean {
    return k >= 0 && k < this.derived && !this.#gone.has(k);
  }

  /** Rows per status: delivered, bounced and pending, in the order rows take them. */
  statusCounts(): [string, number][] {
    const sent = Math.min(this.c.stats.sent, this.derived);
    const counts = new Map<string, number>([
      ['sent', this.delivered],
      ['bounced', sent - this.delivered],
      ['pending', this.derived - sent],
    ]);
    for (const k of this.#gone) counts.set(this.status(k), counts.get(this.status(k))! - 1);
    return [...counts].filter(([, n]) => n > 0);
  }

  /** The listed rows in order (newest first with `newest`), from the `offset`-th, at most `size`. */
  slice(offset: number, size: number, newest = false): number[] {
    const rows: number[] = [];
    if (this.#gone.size === 0) {
      for (let i = offset; i < Math.min(this.total, offset + size); i++) rows.push(newest ? this.derived - 1 - i : i);
      return rows;
    }
    let skip = offset;
    for (let i = 0; i < this.derived && rows.length < size; i++) {
      const k = newest ? this.derived - 1 - i : i;
      if (this.#gone.has(k)) continue;
      if (skip > 0) skip--;
      else rows.push(k);
    }
    return rows;
  }

  isOpen(k: number): boolean {
    return k < this.delivered && isMarked(this.delivered, this.opened, k);
  }

  isClicked(k: number): boolean {
    return this.isOpen(k) && isMarked(this.opened, this.clicked, rankOf(this.delivered, this.opened, k));
  }

  /** Clicked row k's place among the clicked rows (campaign-links.ts spreads the links over it). */
  clickRank(k: number): number {
    return rankOf(this.opened, this.clicked, rankOf(this.delivered, this.opened, k));
  }

  status(k: number): string {
    return k < this.delivered ? 'sent' : k < Math.min(this.c.stats.sent, this.derived) ? 'bounced' : 'pending';
  }

  /**
   * Row indices of one page. The plugin orders the click and view filters by their counter
   * descending; every counter here is 1, so rows keep their id order.
   */
  page(filter: string | null, offset: number, size: number): { total: number; rows: number[] } {
    const open = (t: number): number => nthMarked(this.delivered, this.opened, t);
    if (filter !== 'click' && filter !== 'view') return { total: this.total, rows: this.slice(offset, size) };
    const [n, at] = filter === 'click' ? [this.clicked, (u: number) => open(nthMarked(this.opened, this.clicked, u))] : [this.opened, open];
    const rows: number[] = [];
    if (this.#gone.size === 0) {
      for (let i = offset; i < Math.min(n, offset + size); i++) rows.push(at(i));
      return { total: n, rows };
    }
    let [total, skip] = [0, offset];
    for (let i = 0; i < n; i++) {
      const k = at(i);
      if (this.#gone.has(k)) continue;
      total++;
      if (skip > 0) skip--;
      else if (rows.length < size) rows.push(k);
    }
    return { total, rows };
  }
}

function rowJson(ctx: RouteCtx, e: EmailRows, k: number, embed: 'subscriber' | 'campaign' | 'none' = 'subscriber'): Record<string, unknown> {
  const { c } = e;
  const contactId = ctx.state.contacts.idAt(k);
  const contact = ctx.state.contact(contactId);
  // As the row embeds it (site-ny GET_campaigns_id_emails_per_page_5): without its relations.
  const subscriber = contact && embed !== 'none' ? ctx.ser.bareContact(contact) : null;
  // The day the report series count the campaign's emails on.
  const sentAt = ctx.ser.ts(c.scheduledAt ?? c.updatedAt);
  const status = e.status(k);
  return {
    id: e.rowId(k),
    campaign_id: String(c.id),
    email_type: 'campaign',
    subscriber_id: String(contactId),
    email_subject_id: null,
    email_address: contact?.email ?? null,
    email_subject: c.emailSubject,
    email_body: '',
    email_headers: [],
    is_open: e.isOpen(k) ? '1' : '0',
    is_parsed: status === 'pending' ? '0' : '1',
    click_counter: e.isClicked(k) ? '1' : null,
    status,
    note: null,
    scheduled_at: sentAt,
    email_hash: createHash('md5').update(`${c.id}:${k}`).digest('hex'),
    created_at: sentAt,
    updated_at: sentAt,
    // A contact's own emails embed neither (site-ny GET_subscribers_id_emails); reports/emails both.
    ...(embed === 'none' ? {} : { subscriber }),
    ...(embed === 'campaign' ? { campaign: campaignJson(ctx.ser, c) } : {}),
  };
}

/**
 * GET /campaigns/{id}/emails in real mode: the paginator of email rows and `failed_counts` (the
 * simulator's emails never fail). `filter_type` click or view filters as the plugin's
 * CampaignController does; any other value lists every row.
 */
export function campaignEmailsBody(ctx: RouteCtx, c: CampaignRec): Record<string, unknown> {
  const paging = readPaging(ctx, 15);
  const e = new EmailRows(c, ctx.state.contacts.size, ctx.marketing.deletedEmailRows);
  const { total, rows } = e.page(ctx.query.get('filter_type'), (paging.page - 1) * paging.perPage, paging.perPage);
  return {
    emails: paginator(
      ctx,
      paging,
      total,
      rows.map((k) => rowJson(ctx, e, k)),
    ),
    failed_counts: 0,
  };
}

/**
 * The campaigns with email rows, newest send first: reports/emails orders by `scheduled_at`
 * descending (rows sharing a second came in no fixed order in the site-ny captures; here a
 * campaign's rows come newest id first).
 */
function sentCampaigns(ctx: RouteCtx): EmailRows[] {
  const live = ctx.state.contacts.size;
  return [...ctx.marketing.campaigns.values()]
    .map((c) => new EmailRows(c, live, ctx.marketing.deletedEmailRows))
    .filter((e) => e.total > 0)
    .sort((a, b) => (b.c.scheduledAt ?? b.c.updatedAt) - (a.c.scheduledAt ?? a.c.updatedAt) || b.c.id - a.c.id);
}

/**
 * GET /reports/emails in real mode: every campaign's email rows, each embedding its contact and
 * campaign. `statuses` (rows per status, as strings) comes only when the query names `page=1`,
 * as captured; otherwise it is null.
 */
export function reportEmailsBody(ctx: RouteCtx): Record<string, unknown> {
  const paging = readPaging(ctx, 15);
  const campaigns = sentCampaigns(ctx);
  const total = campaigns.reduce((n, e) => n + e.total, 0);
  const data: Record<string, unknown>[] = [];
  let skip = (paging.page - 1) * paging.perPage;
  for (const e of campaigns) {
    if (data.length === paging.perPage) break;
    if (skip >= e.total) {
      skip -= e.total;
      continue;
    }
    for (const k of e.slice(skip, paging.perPage - data.length, true)) data.push(rowJson(ctx, e, k, 'campaign'));
    skip = 0;
  }
  const statuses: Record<string, number> = {};
  if (ctx.query.get('page') === '1') for (const e of campaigns) for (const [status, n] of e.statusCounts()) statuses[status] = (statuses[status] ?? 0) + n;
  return {
    emails: paginator(ctx, paging, total, data),
    statuses: ctx.query.get('page') === '1' ? Object.fromEntries(Object.entries(statuses).map(([k, n]) => [k, String(n)])) : null,
  };
}

/** GET /subscribers/{id}/emails in real mode: the contact's row of each campaign that reached it (row k is the k-th live contact's). */
export function contactEmailsBody(ctx: RouteCtx, contactId: number): Record<string, unknown> {
  const paging = readPaging(ctx, 15);
  const k = ctx.state.contacts.has(contactId) ? ctx.state.contacts.lowerBound(contactId) : -1;
  const rows = k < 0 ? [] : sentCampaigns(ctx).filter((e) => e.has(k));
  const offset = (paging.page - 1) * paging.perPage;
  return {
    emails: paginator(
      ctx,
      paging,
      rows.length,
      rows.slice(offset, offset + paging.perPage).map((e) => rowJson(ctx, e, k, 'none')),
    ),
  };
}

/**
 * DELETE /reports/emails and /subscribers/{id}/emails: the plugin deletes the email rows named by
 * `email_ids` (query or body); a contact's route only its own. Not captured: the answer is a
 * `{message}` as the plugin's other deletes give, and the campaign's counters stay as they are
 * (the simulator keeps them apart from the rows).
 */
export function deleteEmailRows(ctx: RouteCtx, contactId?: number): Record<string, unknown> {
  const fromBody = Array.isArray(ctx.body.email_ids) ? ctx.body.email_ids.map(String) : [];
  const ids = [...queryArray(ctx.query, 'email_ids'), ...fromBody].map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const k = contactId !== undefined && ctx.state.contacts.has(contactId) ? ctx.state.contacts.lowerBound(contactId) : undefined;
  const live = ctx.state.contacts.size;
  for (const id of ids) {
    const c = ctx.marketing.campaigns.get(Math.floor((id - 1) / ROW_ID_SPAN) + 1);
    if (!c) continue;
    const e = new EmailRows(c, live, ctx.marketing.deletedEmailRows);
    const row = id - 1 - (c.id - 1) * ROW_ID_SPAN;
    if (e.has(row) && (contactId === undefined || row === k)) ctx.marketing.deletedEmailRows.add(id);
  }
  return { message: 'Selected emails has been deleted' };
}
