/**
 * The key layout of fluentcrm-2.9's report series (`/reports/subscribers`, `email-sents`, ...), as
 * captured in fixtures/fluentcrm-2.9 and its site-ny folder. Pure: the caller supplies the rows.
 *
 * The plugin walks a PHP DatePeriod from `from` up to (not including) `to` and writes a zero for
 * each step: daily for ranges up to 62 days, weekly above that, monthly ("Nov 2025") above 92 days.
 * It then groups the rows by that frequency and writes each group's count under the date of the
 * group's first row (table order), overwriting a step's zero or appending a key after the steps.
 * Daily and monthly groups land on their step; weekly ones (weeks starting on Sunday) usually do
 * not, which is why the captured 75-day series has zero-valued week starts plus extra, unsorted
 * date keys. A month after the last step appears only when it has rows.
 */

const DAY = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** More keys than any sensible range has; a far-off date_range must not build millions of them. */
const MAX_STEPS = 5_000;

export type SeriesFrequency = 'daily' | 'weekly' | 'monthly';

/** A counted row: its site-local day (`YYYY-MM-DD`) and how many it stands for. */
export interface SeriesRow {
  day: string;
  n: number;
}

const ms = (day: string): number => Date.parse(`${day}T00:00:00Z`);
const dayOf = (t: number): string => new Date(t).toISOString().slice(0, 10);

export const addDays = (day: string, n: number): string => dayOf(ms(day) + n * DAY);

export const monthKey = (day: string): string => `${MONTHS[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`;

/** Daily up to 62 days, weekly up to 92, monthly beyond (the plugin's thresholds). */
export function seriesFrequency(from: string, to: string): SeriesFrequency {
  const days = Math.round((ms(to) - ms(from)) / DAY);
  if (days > 92) return 'monthly';
  if (days > 62) return 'weekly';
  return 'daily';
}

/** The DatePeriod steps: `from`, then +1 day, +1 week or +1 month (PHP's overflow: Jan 31 + 1 month = Mar 3), while before `to`. */
function steps(from: string, to: string, freq: SeriesFrequency): string[] {
  const out: string[] = [];
  const [y, m, d] = from.split('-').map(Number) as [number, number, number];
  for (let i = 0; out.length < MAX_STEPS; i++) {
    const t = freq === 'monthly' ? Date.UTC(y, m - 1 + i, d) : ms(from) + i * (freq === 'weekly' ? 7 : 1) * DAY;
    if (t >= ms(to)) break;
    out.push(dayOf(t));
  }
  return out;
}

/** The group a row falls in: its day, its Sunday-started week, or its month. */
function groupOf(day: string, freq: SeriesFrequency): string {
  if (freq === 'daily') return day;
  if (freq === 'monthly') return day.slice(0, 7);
  return addDays(day, -new Date(ms(day)).getUTCDay());
}

/**
 * `{key: count}` for rows (in table order) in [from, to): the step keys with zeros, each group's
 * total written under its first row's key (formatted as the steps are), groups in ascending order.
 */
export function bucketSeries(from: string, to: string, rows: Iterable<SeriesRow>): Record<string, number> {
  const freq = seriesFrequency(from, to);
  const fmt = (day: string): string => (freq === 'monthly' ? monthKey(day) : day);
  const out = new Map<string, number>(steps(from, to, freq).map((s) => [fmt(s), 0]));
  const groups = new Map<string, { key: string; n: number }>();
  for (const r of rows) {
    if (r.day < from || r.day >= to) continue;
    const g = groupOf(r.day, freq);
    const hit = groups.get(g);
    if (hit) hit.n += r.n;
    else groups.set(g, { key: fmt(r.day), n: r.n });
  }
  for (const g of [...groups.keys()].sort()) {
    const { key, n } = groups.get(g)!;
    out.set(key, n);
  }
  return Object.fromEntries(out);
}
