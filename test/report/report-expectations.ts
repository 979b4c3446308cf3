import type { Page } from 'puppeteer-core';

/** What the test reads from the views itself, to compare with what the page shows. */
export const VIEW_QUERIES = {
  growth: `SELECT period, strftime(period_start, '%Y-%m-%d') AS period_start, status, new_contacts, total_contacts FROM subscriber_growth_by_period ORDER BY period, period_start, status`,
  campaigns: `SELECT * FROM campaign_performance ORDER BY coalesce(scheduled_at, created_at) DESC NULLS LAST, id DESC LIMIT 40`,
  funnels: `SELECT * FROM funnel_step_dropoff`,
  taxonomy: `SELECT * FROM tag_list_member_counts`,
  runs: `SELECT * FROM sync_run_health`,
  freshness: `SELECT * FROM sync_stream_freshness`,
  failures: `SELECT * FROM sync_failures`,
  webhookLag: `SELECT strftime(day, '%Y-%m-%d') AS day, * EXCLUDE (day) FROM webhook_lag_daily`,
  deadLetters: `SELECT * FROM webhook_dead_letters_open`,
} as const;

type N = number | null;
export interface Expected {
  growth: { period: string; period_start: string; status: string; new_contacts: number; total_contacts: number }[];
  campaigns: { title: string; sent: N; opens: N; clicks: N; unsubscribes: N; open_rate: N; click_rate: N; unsubscribe_rate: N }[];
  funnels: { funnel_id: number; label: string; reached: N; dropped: N; percent_of_entrants: N }[];
  taxonomy: { kind: string; id: number; title: string; members: number; previous_members: N; change: N; crm_subscribers: N }[];
  runs: { stream: string; status: string; duration_s: N; rows_read: number; requests: number }[];
  freshness: { stream: string; last_success_at: Date | null; last_status: string; runs: number; failed_runs: number }[];
  failures: { stream: string; error: string | null }[];
  webhookLag: { day: string; deliveries: number; failed: number; delivery_lag_p50_s: N; delivery_lag_p95_s: N; apply_lag_p50_s: N }[];
  deadLetters: { delivery_id: string; error: string | null }[];
}

/** The rows of a report table as {column key: text shown}. */
export function cellsOf(page: Page, id: string): Promise<Record<string, string>[]> {
  return page.$$eval(`table[data-table="${id}"] tbody tr`, (trs) =>
    trs.map((tr) => Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.getAttribute('data-col')!, td.textContent ?? '']))),
  );
}

/** A figure as shown ("1,234", "+7", "−3", "45.5%", "3.5 s", "–") back as a number, or null for "–". */
export function figure(text: string, kind: 'plain' | 'rate' | 'seconds' = 'plain'): number | null {
  const t = text.trim();
  if (t === '–') return null;
  const n = Number(t.replace(/[,%+]|\ss$/g, '').replace('−', '-'));
  if (Number.isNaN(n)) throw new Error(`not a figure: "${text}"`);
  return kind === 'rate' ? n / 100 : n;
}

/**
 * Both null, or within `tolerance` of each other. A figure rounded to one decimal is off by up to
 * exactly half a step (0.75 shows as "0.8"), and 0.8 - 0.75 is 0.05000000000000004 in binary: the
 * comparison allows for that last bit.
 */
export function near(shown: number | null, want: number | null, tolerance: number): boolean {
  if (shown === null || want === null) return shown === want;
  return Math.abs(shown - want) <= tolerance + 1e-9;
}
