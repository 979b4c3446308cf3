import type { GrowthRow, Period } from '../warehouse/report-data.js';
import { stackedAreaChart } from './area-chart.js';
import { dataTable, type Column } from './data-table.js';
import { fmtInt } from './format.js';
import { statusColor } from './palette.js';

const PERIODS: readonly { period: Period; label: string }[] = [
  { period: 'month', label: 'Month' },
  { period: 'week', label: 'Week' },
  { period: 'day', label: 'Day' },
];

interface PeriodRow {
  start: string;
  totals: Map<string, number>;
  added: number;
}

/** Contacts by current status over time, one panel per period length; radio buttons pick one (no script needed). */
export function growthSection(rows: readonly GrowthRow[]): string {
  if (rows.length === 0) return section('<p class="empty">No contacts with a creation date yet.</p>');
  const finalTotals = new Map<string, number>();
  for (const r of rows) if (r.period === 'month') finalTotals.set(r.status, r.total_contacts);
  const statuses = [...new Set(rows.map((r) => r.status))].sort((a, b) => (finalTotals.get(b) ?? 0) - (finalTotals.get(a) ?? 0) || a.localeCompare(b));
  const pickers = PERIODS.map(
    (p) => `<input type="radio" name="growth-period" id="gp-${p.period}" value="${p.period}"${p.period === 'month' ? ' checked' : ''}><label for="gp-${p.period}">${p.label}</label>`,
  ).join('');
  const panels = PERIODS.map((p) =>
    panel(
      p.period,
      p.label,
      rows.filter((r) => r.period === p.period),
      statuses,
    ),
  ).join('');
  return section(`<div class="period-picker">${pickers}${panels}</div>`);
}

function panel(period: Period, label: string, rows: readonly GrowthRow[], statuses: readonly string[]): string {
  const byStart = new Map<string, PeriodRow>();
  for (const r of rows) {
    let p = byStart.get(r.period_start);
    if (!p) byStart.set(r.period_start, (p = { start: r.period_start, totals: new Map(), added: 0 }));
    p.totals.set(r.status, r.total_contacts);
    p.added += r.new_contacts;
  }
  const periods = [...byStart.values()].sort((a, b) => a.start.localeCompare(b.start));
  const series = statuses.map((s, i) => ({ name: s, color: statusColor(s, i), values: periods.map((p) => p.totals.get(s) ?? 0) }));
  const columns: Column<PeriodRow>[] = [
    { key: 'period_start', label: `${label} from`, cell: (p) => p.start },
    ...statuses.map((s): Column<PeriodRow> => ({ key: `status:${s}`, label: s, numeric: true, cell: (p) => fmtInt(p.totals.get(s) ?? 0) })),
    { key: 'new_contacts', label: 'new in period', numeric: true, cell: (p) => fmtInt(p.added) },
    { key: 'total', label: 'total', numeric: true, cell: (p) => fmtInt([...p.totals.values()].reduce((a, b) => a + b, 0)) },
  ];
  const chart = stackedAreaChart({ id: `growth-${period}`, title: `Contacts by status, per ${period}`, labels: periods.map((p) => p.start), series });
  const table = dataTable({
    id: `growth-${period}-table`,
    caption: `Contacts by current status at the end of each ${period} (running totals), and contacts created in the ${period}`,
    columns,
    rows: periods,
  });
  return `<div class="panel panel-${period}">${chart}${table}</div>`;
}

function section(body: string): string {
  return `<section id="growth"><h2>Subscriber growth</h2><p class="note">Live contacts by the day they were created, stacked by their current status (view <code>subscriber_growth_by_period</code>).</p>${body}</section>`;
}
