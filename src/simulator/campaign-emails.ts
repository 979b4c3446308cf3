import { createHash } from 'node:crypto';
import type { RouteCtx } from './http-types.js';
import type { CampaignRec } from './model.js';
import { paginator, readPaging } from './paging.js';

/** Sending is over: recipients left without an email row stay so (see emailRowCount). */
const FINISHED = new Set(['sent', 'archived']);

/**
 * Row ids number one table across campaigns (campaign 1's are 1, 2, ... as captured); the span is
 * above the 5,000,000 contacts the simulator seeds at most.
 */
const ROW_ID_SPAN = 10_000_000;

/**
 * The campaign's email rows: the plugin's `stats.total` counts them, the `emails` paginator lists
 * them. A finished campaign has a row per email sent, and its recipients_count may count more
 * (site-ny campaign 1: 493 recipients, 492 rows, no failed row); one still sending also has a
 * pending row per email left.
 */
export function emailRowCount(c: CampaignRec): number {
  return FINISHED.has(c.status) ? c.stats.sent : Math.max(c.stats.sent, c.recipientsCount);
}

/** Row k (0-based) of n is one of m marked rows, spread evenly: no row list needs storing. */
const isMarked = (n: number, m: number, k: number): boolean => Math.floor(((k + 1) * m) / n) > Math.floor((k * m) / n);
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
class EmailRows {
  readonly total: number;
  readonly delivered: number;
  readonly opened: number;
  readonly clicked: number;

  constructor(
    readonly c: CampaignRec,
    liveContacts: number,
  ) {
    // Deletes move rows onto the next live contacts; only when fewer contacts than emails are
    // left are there fewer rows than the counters say.
    this.total = Math.min(emailRowCount(c), liveContacts);
    this.delivered = Math.min(c.stats.delivered, c.stats.sent, this.total);
    this.opened = Math.min(c.stats.opened, this.delivered);
    this.clicked = Math.min(c.stats.clicked, this.opened);
  }

  isOpen(k: number): boolean {
    return k < this.delivered && isMarked(this.delivered, this.opened, k);
  }

  isClicked(k: number): boolean {
    return this.isOpen(k) && isMarked(this.opened, this.clicked, rankOf(this.delivered, this.opened, k));
  }

  status(k: number): string {
    return k < this.delivered ? 'sent' : k < Math.min(this.c.stats.sent, this.total) ? 'bounced' : 'pending';
  }

  /**
   * Row indices of one page. The plugin orders the click and view filters by their counter
   * descending; every counter here is 1, so rows keep their id order.
   */
  page(filter: string | null, offset: number, size: number): { total: number; rows: number[] } {
    const open = (t: number): number => nthMarked(this.delivered, this.opened, t);
    const [total, at] = filter === 'click' ? [this.clicked, (u: number) => open(nthMarked(this.opened, this.clicked, u))] : filter === 'view' ? [this.opened, open] : [this.total, (k: number) => k];
    const rows: number[] = [];
    for (let i = offset; i < Math.min(total, offset + size); i++) rows.push(at(i));
    return { total, rows };
  }
}

function rowJson(ctx: RouteCtx, e: EmailRows, k: number): Record<string, unknown> {
  const { c } = e;
  const contactId = ctx.state.contacts.idAt(k);
  const contact = ctx.state.contact(contactId);
  // As the row embeds it (site-ny GET_campaigns_id_emails_per_page_5): without its relations.
  const subscriber = contact ? ctx.ser.contact(contact) : null;
  if (subscriber) for (const key of ['tags', 'lists', 'company', 'companies']) delete subscriber[key];
  // The day the report series count the campaign's emails on.
  const sentAt = ctx.ser.ts(c.scheduledAt ?? c.updatedAt);
  const status = e.status(k);
  return {
    id: (c.id - 1) * ROW_ID_SPAN + k + 1,
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
    subscriber,
  };
}

/**
 * GET /campaigns/{id}/emails in real mode: the paginator of email rows and `failed_counts` (the
 * simulator's emails never fail). `filter_type` click or view filters as the plugin's
 * CampaignController does; any other value lists every row.
 */
export function campaignEmailsBody(ctx: RouteCtx, c: CampaignRec): Record<string, unknown> {
  const paging = readPaging(ctx, 15);
  const e = new EmailRows(c, ctx.state.contacts.size);
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
