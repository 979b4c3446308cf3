// The figures an analyst reads after one `crmsync sync` against the independent CRM of
// test/independent/spec-server.ts: `crmsync status --json`, the analyst views through `crmsync query`,
// and the tables of `crmsync report`. Every expected figure is computed here from the server's own
// data and the words of the interface (../shared/spec/crm-rest-api.md) and the user docs (README.md,
// docs/warehouse.md, docs/report.md, docs/sync.md), never from crmsync's code.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAMPAIGNS, CAMPAIGN_STATS, COMPANIES, FIELDS, FUNNELS, LISTS, SpecServer, TAGS, seedContact, type Json, type SpecContact, specServerCliEnv } from './spec-server.js';
import { runBuiltCli } from './built-cli.js';

const TZ = 'America/New_York';
const STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'];
type Row = Record<string, unknown>;

let server: SpecServer;
let dir: string;
let env: Record<string, string>;

function crmsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBuiltCli(args, env, dir, 40_000);
}

/** `crmsync query -f json SQL`, parsed. */
async function query(sql: string): Promise<Row[]> {
  const res = await crmsync(['query', '-f', 'json', sql]);
  if (res.code !== 0) throw new Error(`crmsync query failed (${String(res.code)}): ${sql}\n${res.stderr}`);
  return JSON.parse(res.stdout) as Row[];
}

// ---- What the server holds, and the figures computed from it -------------------------------------

const FIRST_IDS = Array.from({ length: 47 }, (_, i) => i + 1).filter((i) => i !== 13 && i !== 30); // 45 contacts, and 48 below
const contacts = (): SpecContact[] => [...server.contacts.values()].sort((a, b) => a.id - b.id);
const num = (v: unknown): number => Number(v);

/** The day a contact was created, in the site's zone: the CRM's own zone-less wall time is site-local (Response conventions 5). */
const siteDay = (c: SpecContact): string => c.created_at.slice(0, 10);
const addDays = (day: string, n: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
/** Start of the period holding `day`: the day, the week from Monday, the month (docs/report.md). */
function periodStart(period: 'day' | 'week' | 'month', day: string): string {
  if (period === 'day') return day;
  if (period === 'month') return `${day.slice(0, 7)}-01`;
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay(); // 0 Sunday
  return addDays(day, -((dow + 6) % 7));
}

/** subscriber_growth as docs/warehouse.md words it: contacts created per day, how many are subscribed now, running total. */
function expectedGrowth(): Row[] {
  const days = [...new Set(contacts().map(siteDay))].sort();
  let total = 0;
  return days.map((day) => {
    const on = contacts().filter((c) => siteDay(c) === day);
    total += on.length;
    return { day, new_contacts: on.length, new_subscribed: on.filter((c) => c.status === 'subscribed').length, total_contacts: total };
  });
}

/** subscriber_growth_by_period figures: per period and current status, created in it and the running total at its end. */
function expectedByPeriod(period: 'day' | 'week' | 'month', start: string, status: string): { new_contacts: number; total_contacts: number } {
  const mine = contacts().filter((c) => c.status === status);
  return {
    new_contacts: mine.filter((c) => periodStart(period, siteDay(c)) === start).length,
    total_contacts: mine.filter((c) => periodStart(period, siteDay(c)) <= start).length,
  };
}
function periodsWithContacts(period: 'day' | 'week' | 'month'): string[] {
  return [...new Set(contacts().map((c) => periodStart(period, siteDay(c))))].sort();
}

const members = (key: 'tagIds' | 'listIds', id: number): SpecContact[] => contacts().filter((c) => c[key].includes(id));
const titleOf = (rows: { id: number; title: string }[], id: number): string => rows.find((r) => r.id === id)!.title;

/** Campaign rates: "Rates are shares of the emails sent" (the report's words); click-to-open is clicks over opens. None without a denominator. */
function expectedCampaigns(): Row[] {
  return (CAMPAIGNS as Record<string, Json>[]).map((c) => {
    const s = CAMPAIGN_STATS[num(c.id)] as { sent: number; opens: number; clicks: number };
    return {
      id: num(c.id),
      title: c.title,
      status: c.status,
      sent: s.sent,
      opens: s.opens,
      clicks: s.clicks,
      open_rate: s.sent ? s.opens / s.sent : null,
      click_rate: s.sent ? s.clicks / s.sent : null,
      click_to_open_rate: s.opens ? s.clicks / s.opens : null,
    };
  });
}

/** The step report the server serves for funnel 1 (funnel 2 has an empty `stats`, rule 4: no steps). */
const STEPS = [
  { label: 'Entrance', sequence_id: 0, type: 'root', count: 17, previous_step_count: 17, drop_count: 0 },
  { label: 'Welcome mail', sequence_id: 10, type: 'action', count: 15, previous_step_count: 17, drop_count: 2 },
  { label: 'Goal', sequence_id: 12, type: 'benchmark', count: 20, previous_step_count: 15, drop_count: 0 },
];
/** Rule 1: the root row's count is the number of distinct entrants, and every later step is measured against it. */
const entrants = STEPS.find((s) => s.type === 'root')!.count;

/** Equal within the rounding of a shown figure. */
const near = (actual: unknown, expected: number | null, within = 5e-5): void => {
  if (expected === null) expect(actual).toBeNull();
  else expect(Math.abs(num(actual) - expected), `${String(actual)} vs ${expected}`).toBeLessThanOrEqual(within);
};

// ---- The run: one sync, then what the analyst reads -------------------------------------------------

let status: { streams: Row[] };
let views: Record<string, Row[]>;
let html: string;

describe('the figures crmsync shows after a sync against an independent reading of the interface', () => {
  beforeAll(async () => {
    server = new SpecServer(FIRST_IDS);
    // A contact created on the evening of a month's last day (site time): its site day is 31 May, its UTC day 1 June.
    server.contacts.set(48, { ...seedContact(48), created_at: '2025-05-31 21:10:00', updated_at: '2025-06-01 09:00:00' });
    const baseUrl = await server.start();
    dir = await mkdtemp(join(tmpdir(), 'crmsync-indep-figures-'));
    env = specServerCliEnv(baseUrl, dir, TZ);
    const sync = await crmsync(['sync', '--per-page', '10']);
    if (sync.code !== 0) throw new Error(`crmsync sync failed (${String(sync.code)}):\n${sync.stdout}\n${sync.stderr}`);

    const st = await crmsync(['status', '--json']);
    if (st.code !== 0) throw new Error(`crmsync status failed:\n${st.stderr}`);
    status = JSON.parse(st.stdout) as { streams: Row[] };

    const sqls: Record<string, string> = {
      byStatus: 'SELECT status, count(*)::INT AS n FROM contacts_current GROUP BY ALL ORDER BY status',
      current: 'SELECT id, status, tag_titles, list_titles FROM contacts_current ORDER BY id',
      tagsNamed: 'SELECT contact_id, tag_id, tag_title, tag_slug FROM contact_tags_named ORDER BY ALL',
      listsNamed: 'SELECT contact_id, list_id, list_title, list_slug FROM contact_lists_named ORDER BY ALL',
      // docs/warehouse.md, "Contacts per tag", as written there (and the same for lists).
      perTag: 'SELECT tag_title, count(*)::INT AS contacts FROM contact_tags_named t JOIN contacts_current c ON c.id = t.contact_id GROUP BY ALL ORDER BY contacts DESC, tag_title',
      perList: 'SELECT list_title, count(*)::INT AS contacts FROM contact_lists_named t JOIN contacts_current c ON c.id = t.contact_id GROUP BY ALL ORDER BY contacts DESC, list_title',
      campaigns: 'SELECT id, title, status, sent, opens, clicks, unsubscribes, open_rate, click_rate, click_to_open_rate, unsubscribe_rate FROM campaign_performance ORDER BY id',
      dropoff:
        'SELECT funnel_id, funnel_title, sequence_id, label, type, reached, previous_step_count, dropped, drop_percent, percent_of_entrants FROM funnel_step_dropoff ORDER BY funnel_id, previous_step_count DESC, reached DESC',
      growth: 'SELECT CAST(day AS VARCHAR) AS day, new_contacts::INT AS new_contacts, new_subscribed::INT AS new_subscribed, total_contacts::INT AS total_contacts FROM subscriber_growth ORDER BY day',
      growthMonth: "SELECT CAST(date_trunc('month', day) AS DATE)::VARCHAR AS month, sum(new_contacts)::INT AS n FROM subscriber_growth GROUP BY ALL ORDER BY 1",
      byPeriod:
        'SELECT period, CAST(period_start AS VARCHAR) AS period_start, status, new_contacts::INT AS new_contacts, total_contacts::INT AS total_contacts FROM subscriber_growth_by_period ORDER BY ALL',
      memberCounts: 'SELECT kind, id, title, members, previous_members, change, crm_subscribers FROM tag_list_member_counts ORDER BY kind, id',
      runs: 'SELECT stream, status, rows_read::INT AS rows_read, deleted::INT AS deleted FROM sync_run_health ORDER BY stream',
    };
    views = {};
    const names = Object.keys(sqls);
    // Three at a time: each is a CLI process, on two cores.
    for (let i = 0; i < names.length; i += 3) {
      const batch = names.slice(i, i + 3);
      const got = await Promise.all(batch.map((n) => query(sqls[n]!)));
      batch.forEach((n, k) => (views[n] = got[k]!));
    }

    const out = join(dir, 'report.html');
    const rep = await crmsync(['report', '--out', out]);
    if (rep.code !== 0) throw new Error(`crmsync report failed:\n${rep.stderr}`);
    html = await readFile(out, 'utf8');
  }, 85_000);

  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('status --json: per stream, the rows the server holds and nothing tombstoned', () => {
    const held: Record<string, number> = {
      contacts: server.contacts.size,
      tags: TAGS.length,
      lists: LISTS.length,
      custom_fields: FIELDS.length,
      companies: COMPANIES.length,
      campaigns: CAMPAIGNS.length,
      funnels: FUNNELS.length,
      funnel_subscribers: server.funnelSubscriberRows.length,
    };
    const byStream = Object.fromEntries(status.streams.map((s) => [s.stream as string, s]));
    for (const [stream, n] of Object.entries(held)) {
      expect(byStream[stream], stream).toBeDefined();
      expect(byStream[stream]!.rows, `${stream} rows`).toBe(n);
      expect((byStream[stream]!.lastRun as Row).status, `${stream} last run`).toBe('succeeded');
      // Funnel subscribers are "merged completely per funnel; subscribers of funnels gone from the CRM are
      // removed" (docs/sync.md): no tombstones there, so no count (null) or zero.
      if (stream === 'funnel_subscribers') expect([0, null]).toContain(byStream[stream]!.tombstoned);
      else expect(byStream[stream]!.tombstoned, `${stream} tombstoned`).toBe(0);
    }
    // Reports "are dated snapshots" (docs/sync.md): one run, one snapshot.
    expect(byStream.reports).toMatchObject({ rows: 1, lastRun: { status: 'succeeded' } });
    // The same counts in the runs the report's Sync health draws (sync_run_health: rows read, deleted).
    for (const r of views.runs!) {
      if (r.stream === 'reports') continue;
      expect(r, String(r.stream)).toEqual({ stream: r.stream, status: 'succeeded', rows_read: held[r.stream as string], deleted: 0 });
    }
    expect(views.runs!.map((r) => r.stream).sort()).toEqual([...Object.keys(held), 'reports'].sort());
  });

  it('contacts_current: counts by status, and each contact with the titles of its tags and lists', () => {
    const want = STATUSES.map((s) => ({ status: s, n: contacts().filter((c) => c.status === s).length }))
      .filter((r) => r.n > 0)
      .sort((a, b) => a.status.localeCompare(b.status));
    expect(views.byStatus).toEqual(want);
    expect(want.reduce((a, r) => a + r.n, 0)).toBe(46);
    // Titles as sets: the docs name no order for tag_titles and list_titles.
    const sorted = (v: unknown): string[] => [...((v as string[] | null) ?? [])].sort();
    expect(views.current!.map((r) => ({ id: num(r.id), status: r.status, tags: sorted(r.tag_titles), lists: sorted(r.list_titles) }))).toEqual(
      contacts().map((c) => ({
        id: c.id,
        status: c.status,
        tags: c.tagIds.map((t) => titleOf(TAGS, t)).sort(),
        lists: c.listIds.map((l) => titleOf(LISTS, l)).sort(),
      })),
    );
  });

  it('contact_tags_named and contact_lists_named: every membership with its title, and members per tag and list', () => {
    const key = (r: Row): string => JSON.stringify(r);
    expect(views.tagsNamed!.map((r) => key({ c: num(r.contact_id), t: num(r.tag_id), title: r.tag_title, slug: r.tag_slug })).sort()).toEqual(
      contacts()
        .flatMap((c) => c.tagIds.map((t) => key({ c: c.id, t, title: titleOf(TAGS, t), slug: TAGS.find((x) => x.id === t)!.slug })))
        .sort(),
    );
    expect(views.listsNamed!.map((r) => key({ c: num(r.contact_id), l: num(r.list_id), title: r.list_title, slug: r.list_slug })).sort()).toEqual(
      contacts()
        .flatMap((c) => c.listIds.map((l) => key({ c: c.id, l, title: titleOf(LISTS, l), slug: LISTS.find((x) => x.id === l)!.slug })))
        .sort(),
    );
    const per = (rows: { id: number; title: string }[], k: 'tagIds' | 'listIds', col: string): Row[] =>
      rows
        .map((r) => ({ [col]: r.title, contacts: members(k, r.id).length }))
        .filter((r) => r.contacts > 0)
        .sort((a, b) => b.contacts - a.contacts || String(a[col]).localeCompare(String(b[col])));
    expect(views.perTag).toEqual(per(TAGS, 'tagIds', 'tag_title'));
    expect(views.perList).toEqual(per(LISTS, 'listIds', 'list_title'));
  });

  it('tag_list_member_counts: members now, none at a previous sync yet, and the CRM own subscribed count beside', () => {
    const want = [...LISTS.map((l) => ({ kind: 'list', id: l.id, title: l.title, k: 'listIds' as const })), ...TAGS.map((t) => ({ kind: 'tag', id: t.id, title: t.title, k: 'tagIds' as const }))].map(
      ({ k, ...r }) => ({
        ...r,
        members: members(k, r.id).length,
        // "previous_members and change are empty until the second contact sync" (docs/report.md).
        previous_members: null,
        change: null,
        // "the tag's or list's own subscribersCount from the CRM" = subscribed contacts (spec, Tag).
        crm_subscribers: members(k, r.id).filter((c) => c.status === 'subscribed').length,
      }),
    );
    expect(views.memberCounts!.map((r) => ({ ...r, id: num(r.id) }))).toEqual(want);
  });

  it('campaign_performance: sent, opens, clicks and the rates over emails sent', () => {
    const rows = views.campaigns!;
    expect(rows.map((r) => num(r.id))).toEqual(expectedCampaigns().map((c) => c.id));
    for (const want of expectedCampaigns()) {
      const got = rows.find((r) => num(r.id) === want.id)!;
      expect({ title: got.title, status: got.status, sent: got.sent, opens: got.opens, clicks: got.clicks }).toEqual({
        title: want.title,
        status: want.status,
        sent: want.sent,
        opens: want.opens,
        clicks: want.clicks,
      });
      // Rates as ratios (the docs fix no scale; the report prints them as %), to four decimals.
      near(got.open_rate, want.open_rate as number | null);
      near(got.click_rate, want.click_rate as number | null);
      near(got.click_to_open_rate, want.click_to_open_rate as number | null);
      // The interface's campaign stats carry no unsubscribes, and campaign_performance "reads the campaigns' stats" (docs/sync.md).
      expect(got.unsubscribes).toBeNull();
      expect(got.unsubscribe_rate).toBeNull();
    }
  });

  it('funnel_step_dropoff: each step of the served step report, reached, dropped, drop % and % of entrants', () => {
    const rows = views.dropoff!;
    // Funnel 2's report is an empty `stats` (rule 4): it has no steps to show.
    expect(rows.every((r) => num(r.funnel_id) === 1)).toBe(true);
    expect(rows.map((r) => num(r.sequence_id)).sort((a, b) => a - b)).toEqual(STEPS.map((s) => s.sequence_id));
    for (const s of STEPS) {
      const got = rows.find((r) => num(r.sequence_id) === s.sequence_id)!;
      expect({ title: got.funnel_title, label: got.label, type: got.type, reached: got.reached, previous: got.previous_step_count, dropped: got.dropped }).toEqual({
        title: 'Welcome',
        label: s.label,
        type: s.type,
        reached: s.count,
        previous: s.previous_step_count,
        dropped: s.drop_count,
      });
      near(got.drop_percent, (100 * s.drop_count) / s.previous_step_count, 0.005);
      // Measured against the entrance row (rule 1), unclamped (a benchmark reached by more than entered: 117.65).
      near(got.percent_of_entrants, (100 * s.count) / entrants, 0.005);
    }
  });

  it('subscriber_growth: totals per month and overall that no day boundary moves', () => {
    // The last running total and the subscribed count hold whatever the day of each contact.
    const rows = views.growth!;
    expect(rows.at(-1)!.total_contacts).toBe(server.contacts.size);
    expect(rows.reduce((a, r) => a + num(r.new_contacts), 0)).toBe(server.contacts.size);
    expect(rows.reduce((a, r) => a + num(r.new_subscribed), 0)).toBe(contacts().filter((c) => c.status === 'subscribed').length);
    let running = 0;
    for (const r of rows) expect(r.total_contacts).toBe((running += num(r.new_contacts)));
  });

  // docs/warehouse.md: `subscriber_growth` is "contacts created per day"; the day a contact was
  // created is the CRM's, whose zone-less `created_at` is site time (spec, Response conventions 5;
  // warehouse.md: "any zone-less string that still arrives is read in the site time zone, siteTimeZone /
  // CRM_TIMEZONE"). Contact 12 was created on '2025-03-16 20:42:12' in New York (a Sunday): counted
  // on 16 March, not its UTC date 17 March; contact 48 ('2025-05-31 21:10:00') in May, not June.
  it('subscriber_growth: contacts created per day in the site time zone', () => {
    expect(views.growth).toEqual(expectedGrowth());
  });

  it('subscriber_growth: per month in the site time zone (the docs example "Growth per month")', () => {
    const want = new Map<string, number>();
    for (const c of contacts()) want.set(periodStart('month', siteDay(c)), (want.get(periodStart('month', siteDay(c))) ?? 0) + 1);
    expect(views.growthMonth).toEqual([...want].sort().map(([month, n]) => ({ month, n })));
  });

  it('subscriber_growth_by_period: every status in every period shown, running totals that end at the status counts', () => {
    const rows = views.byPeriod!;
    for (const period of ['day', 'week', 'month'] as const) {
      const mine = rows.filter((r) => r.period === period);
      const starts = [...new Set(mine.map((r) => r.period_start as string))].sort();
      expect(starts.length, period).toBeGreaterThan(0);
      // "one row per period ... and status, zero-filled".
      for (const s of starts)
        expect(
          mine
            .filter((r) => r.period_start === s)
            .map((r) => r.status)
            .sort(),
          `${period} ${s}`,
        ).toEqual([...STATUSES].sort());
      for (const status of STATUSES) {
        const series = mine.filter((r) => r.status === status).sort((a, b) => String(a.period_start).localeCompare(String(b.period_start)));
        let running = 0;
        for (const r of series) expect(r.total_contacts, `${period} ${String(r.period_start)} ${status}`).toBe((running += num(r.new_contacts)));
        expect(running, `${period} ${status}`).toBe(contacts().filter((c) => c.status === status).length);
      }
    }
  });

  // docs/report.md: "live contacts by creation date"; the creation date is the CRM's, site time (as above).
  it('subscriber_growth_by_period: per day, week from Monday and month in the site time zone', () => {
    const rows = views.byPeriod!;
    for (const period of ['day', 'week', 'month'] as const) {
      const mine = rows.filter((r) => r.period === period);
      const starts = [...new Set(mine.map((r) => r.period_start as string))];
      for (const p of periodsWithContacts(period)) expect(starts, `${period} ${p}`).toContain(p);
      for (const r of mine)
        expect({ n: r.new_contacts, t: r.total_contacts }, `${period} ${String(r.period_start)} ${String(r.status)}`).toEqual(
          (({ new_contacts, total_contacts }) => ({ n: new_contacts, t: total_contacts }))(expectedByPeriod(period, r.period_start as string, r.status as string)),
        );
    }
  });

  // ---- crmsync report --------------------------------------------------------------------------------

  /** The rows of the report table with `id`, each as {data-col: text}. */
  function table(id: string): Record<string, string>[] {
    const start = html.indexOf(`<table id="${id}"`);
    expect(start, `table ${id} in the report`).toBeGreaterThan(-1);
    const body = html.slice(start, html.indexOf('</table>', start));
    const unescape = (s: string): string =>
      s
        .replace(/<[^>]+>/g, '')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&')
        .trim();
    return [...body.matchAll(/<tr>(.*?)<\/tr>/gs)]
      .map((m) => Object.fromEntries([...m[1]!.matchAll(/<td[^>]*data-col="([^"]+)"[^>]*>(.*?)<\/td>/gs)].map((c) => [c[1]!, unescape(c[2]!)])))
      .filter((r) => Object.keys(r).length > 0);
  }
  /** A shown percentage within its one decimal (and the interface's own two-decimal rounding before it). */
  const pct = (shown: string | undefined, exact: number | null): void => {
    if (exact === null) return void expect(shown).toBe('–');
    expect(shown, String(exact)).toMatch(/^\d+(\.\d)?%$/);
    expect(Math.abs(Number(shown!.slice(0, -1)) - exact), `${shown!} vs ${exact}`).toBeLessThanOrEqual(0.055);
  };

  it('report: written, self-contained, and says how many live contacts it shows', () => {
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('Content-Security-Policy');
    expect(html.replace(/<[^>]+>/g, ' ')).toMatch(new RegExp(`\\b${server.contacts.size} live contacts\\b`));
  });

  it('report: campaign table, counters and rates as shares of the emails sent', () => {
    const rows = table('campaigns-table');
    expect(rows.map((r) => r.title).sort()).toEqual(
      expectedCampaigns()
        .map((c) => c.title as string)
        .sort(),
    );
    for (const want of expectedCampaigns()) {
      const got = rows.find((r) => r.title === want.title)!;
      expect({ status: got.status, sent: got.sent, opens: got.opens, clicks: got.clicks, unsubscribes: got.unsubscribes }).toEqual({
        status: want.status,
        sent: String(want.sent),
        opens: String(want.opens),
        clicks: String(want.clicks),
        unsubscribes: '–',
      });
      pct(got.open_rate, want.open_rate === null ? null : 100 * (want.open_rate as number));
      pct(got.click_rate, want.click_rate === null ? null : 100 * (want.click_rate as number));
    }
  });

  it('report: funnel drop-off table of funnel 1 (and none for funnel 2, which has no steps)', () => {
    const rows = table('funnel-1-table');
    expect(rows.map((r) => r.label)).toEqual(STEPS.map((s) => s.label));
    STEPS.forEach((s, i) => {
      expect({ reached: rows[i]!.reached, dropped: rows[i]!.dropped }).toEqual({ reached: String(s.count), dropped: String(s.drop_count) });
      pct(rows[i]!.drop_percent, (100 * s.drop_count) / s.previous_step_count);
      pct(rows[i]!.percent_of_entrants, (100 * s.count) / entrants);
    });
    expect(html).not.toContain('id="funnel-2-table"');
  });

  it('report: tag and list tables, members now and the CRM count beside', () => {
    for (const [id, rows, k] of [
      ['tags-table', TAGS, 'tagIds'],
      ['lists-table', LISTS, 'listIds'],
    ] as const) {
      const got = table(id);
      expect(got.map((r) => r.title).sort(), id).toEqual(rows.map((r) => r.title).sort());
      for (const t of rows) {
        const m = members(k, t.id);
        expect(
          got.find((r) => r.title === t.title),
          `${id} ${t.title}`,
        ).toEqual({
          title: t.title,
          members: String(m.length),
          previous_members: '–',
          change: '–',
          crm_subscribers: String(m.filter((c) => c.status === 'subscribed').length),
        });
      }
    }
  });

  /** The report's growth tables hold, per period shown, the running total per status, the new contacts and the total. */
  function growthTable(period: 'day' | 'week' | 'month'): Record<string, string>[] {
    return table(`growth-${period}-table`);
  }

  it('report: growth tables end at each status count and the number of contacts', () => {
    for (const period of ['day', 'week', 'month'] as const) {
      const rows = growthTable(period);
      expect(rows.length, period).toBeGreaterThan(0);
      const last = rows.at(-1)!;
      for (const s of STATUSES) expect(last[`status:${s}`], `${period} ${s}`).toBe(String(contacts().filter((c) => c.status === s).length));
      expect(last.total, period).toBe(String(server.contacts.size));
      expect(
        rows.reduce((a, r) => a + Number(r.new_contacts), 0),
        period,
      ).toBe(server.contacts.size);
    }
  });

  // As subscriber_growth_by_period above: the periods are the CRM's creation dates in the site time zone.
  it('report: growth tables per day, week and month in the site time zone', () => {
    for (const period of ['day', 'week', 'month'] as const) {
      const rows = growthTable(period);
      const shown = rows.map((r) => r.period_start!);
      for (const p of periodsWithContacts(period)) expect(shown, `${period} ${p}`).toContain(p);
      for (const r of rows) {
        const want: Record<string, string> = { period_start: r.period_start! };
        for (const s of STATUSES) want[`status:${s}`] = String(expectedByPeriod(period, r.period_start!, s).total_contacts);
        want.new_contacts = String(STATUSES.reduce((a, s) => a + expectedByPeriod(period, r.period_start!, s).new_contacts, 0));
        want.total = String(STATUSES.reduce((a, s) => a + expectedByPeriod(period, r.period_start!, s).total_contacts, 0));
        expect(r, `${period} ${r.period_start!}`).toEqual(want);
      }
    }
  });
});
