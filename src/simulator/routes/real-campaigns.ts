import { segmentSelector } from '../campaign-segment.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { campaignJson } from '../marketing-serialize.js';
import type { CampaignRec, ContactRec } from '../model.js';
import { paginator, readPaging, type Paging } from '../paging.js';
import { SimError } from '../sim-error.js';

const READ = ['crm_read_emails', 'crm_manage_emails'];
const WRITE = ['crm_manage_emails'];

const FONTS = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif, 'Apple Color Emoji', 'Segoe UI Emoji', 'Segoe UI Symbol'";

/** The settings the plugin's Campaign model gives a new campaign (POST_campaigns). */
const NEW_CAMPAIGN_SETTINGS = {
  mailer_settings: { from_name: '', from_email: '', reply_to_name: '', reply_to_email: '', is_custom: 'no' },
  subscribers: [{ list: 'all', tag: 'all' }],
  excludedSubscribers: [{ list: null, tag: null }],
  sending_filter: 'list_tag',
  dynamic_segment: { id: '', slug: '' },
  advanced_filters: [[]],
  template_config: {
    content_width: 700,
    content_padding: 20,
    headings_font_family: FONTS,
    text_color: '#202020',
    link_color: '',
    body_bg_color: '#FAFAFA',
    content_bg_color: '#FFFFFF',
    footer_text_color: '#202020',
    content_font_family: FONTS,
    paragraph_color: '',
    paragraph_font_size: '',
    paragraph_font_family: '',
    paragraph_line_height: '',
    headings_color: '#202020',
  },
  sending_type: 'instant',
  is_transactional: 'no',
};

/** MySQL's default collation compares titles without case or trailing spaces. */
const sameTitle = (a: string, b: string): boolean => a.trimEnd().toLowerCase() === b.trimEnd().toLowerCase();

/**
 * POST /campaigns: the plugin validates `title` (required, unique in its campaigns table) and
 * answers the bare model it created, in its attribute order, with no `__bench` (POST_campaigns;
 * a taken title is POST_campaigns_duplicate_title's 422). A missing title is not captured: the
 * validator's `required` map, as POST_tags_missing_title. A non-string title counts as missing.
 */
function create(ctx: RouteCtx): SimResponse {
  const raw = ctx.body.title;
  const title = typeof raw === 'string' ? raw.slice(0, 190) : typeof raw === 'number' ? String(raw) : '';
  if (title.trim() === '') throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): title.', { status: 422, body: { title: { required: 'The title field is required.' } } });
  if ([...ctx.marketing.campaigns.values()].some((c) => sameTitle(c.title, title))) {
    throw new SimError(409, 'rest_invalid_param', `A campaign is already titled "${title}"; choose another title.`, {
      status: 422,
      body: { title: { unique: 'The title attribute is already taken and must be unique.' } },
    });
  }
  const c = ctx.marketing.createCampaign(title);
  return ok(createdJson(ctx, c));
}

function createdJson(ctx: RouteCtx, c: CampaignRec): Record<string, unknown> {
  const when = ctx.ser.ts(c.createdAt);
  return {
    title: c.title,
    email_body: '',
    status: c.status,
    type: 'campaign',
    design_template: c.designTemplate,
    slug: c.slug,
    created_by: c.createdBy,
    settings: structuredClone(NEW_CAMPAIGN_SETTINGS),
    updated_at: when,
    created_at: when,
    id: c.id,
    template: null,
    subjects: [],
  };
}

/** The subscriber table's columns, which `sort_by` may name (the serialized contact's keys). */
const COLUMNS = new Set(
  'id user_id hash contact_owner company_id prefix first_name last_name email timezone address_line_1 address_line_2 postal_code city state country ip latitude longitude total_points life_time_value phone status contact_type source avatar date_of_birth created_at last_activity updated_at'.split(
    ' ',
  ),
);

/**
 * `sort_by`/`sort_type` as the plugin passes them to its query (not captured here): a value
 * WordPress's sanitize_sql_orderby rejects gives no ORDER BY (table order, id ascending); a
 * well-formed unknown column is MySQL's error, 423 with the SQL as GET_campaigns_sort_by_bogus.
 */
function readSort(ctx: RouteCtx, paging: Paging): { by: string | null; desc: boolean } {
  const by = ctx.query.get('sort_by') || 'id';
  const desc = (ctx.query.get('sort_type') ?? 'desc').toLowerCase() !== 'asc';
  if (!/^[a-z0-9_]+$/i.test(by)) return { by: null, desc: false };
  if (COLUMNS.has(by)) return { by, desc };
  const column = by.slice(0, 40);
  throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): sort_by; use a contact column such as id, email or created_at.`, {
    status: 423,
    body: {
      message: `Unknown column '${column}' in 'ORDER BY' (SQL: select * from \`wp_fc_subscribers\` where \`status\` = 'subscribed' order by \`${column}\` ${desc ? 'desc' : 'asc'} limit ${paging.perPage} offset ${(paging.page - 1) * paging.perPage})`,
    },
  });
}

/**
 * GET /campaigns/{id}/contacts-by-segment: the contacts the campaign's settings select now, not
 * its recipients (site-ny: 498 against 493 recipients), as a paginator of contacts with their
 * lists and tags (no company keys), newest first; `search` as on the contacts listing. The
 * settings are the ones the campaign's own JSON shows. An unknown campaign is the plugin's 404.
 */
function contactsBySegment(ctx: RouteCtx): SimResponse {
  const campaign = ctx.marketing.campaign(Number(ctx.params.id));
  const paging = readPaging(ctx, 15);
  const sort = readSort(ctx, paging);
  const selects = segmentSelector(campaignJson(ctx.ser, campaign).settings as Record<string, unknown>);
  const search = (ctx.query.get('search') ?? '').trim().toLowerCase().slice(0, 200);
  const store = ctx.state.contacts;
  let ids: number[] = [];
  for (let i = 0; i < store.size; i++) {
    const id = store.idAt(i);
    const core = store.core(id);
    if (core && selects(core) && (!search || store.searchText(id)?.includes(search))) ids.push(id);
  }
  if (sort.by === 'id' && sort.desc) ids.reverse();
  else if (sort.by !== null && sort.by !== 'id') ids = sortedBy(ctx, ids, sort.by, sort.desc);
  const offset = (paging.page - 1) * paging.perPage;
  const data = ids
    .slice(offset, offset + paging.perPage)
    .map((id) => ctx.state.contact(id))
    .filter((c): c is ContactRec => c !== undefined)
    .map((c) => {
      const { tags, lists, company: _company, companies: _companies, ...row } = ctx.ser.contact(c);
      return { ...row, lists, tags };
    });
  return ok({ subscribers: paginator(ctx, paging, ids.length, data) });
}

/** By a column's value as served, nulls first ascending; no tie-breaker, as MySQL's (ties in id order). */
function sortedBy(ctx: RouteCtx, ids: number[], by: string, desc: boolean): number[] {
  const key = (id: number): string | number => {
    const c = ctx.state.contact(id);
    const v = c ? ctx.ser.contact(c)[by] : null;
    return typeof v === 'number' ? v : typeof v === 'string' ? v.toLowerCase() : '';
  };
  const keyed = ids.map((id) => ({ id, k: key(id) }));
  const dir = desc ? -1 : 1;
  keyed.sort((a, b) => (a.k < b.k ? -dir : a.k > b.k ? dir : a.id - b.id));
  return keyed.map((x) => x.id);
}

/** Routes of fluentcrm-2.9's campaign editor that the interface lacks: creation and the recipients preview. */
export const realCampaignEditorRoutes: RouteDef[] = [
  { method: 'POST', path: '/campaigns', caps: WRITE, handler: create, bench: false },
  { method: 'GET', path: '/campaigns/:id/contacts-by-segment', caps: READ, handler: contactsBySegment },
];
