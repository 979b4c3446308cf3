import type { ReportData } from '../warehouse/report-data.js';
import { barChart } from './bar-chart.js';
import { dataTable } from './data-table.js';
import { esc, fmtInt, fmtRate } from './format.js';
import { seriesColor } from './palette.js';

const RATES = [
  { key: 'open_rate', name: 'open rate', color: seriesColor(0) },
  { key: 'click_rate', name: 'click rate', color: seriesColor(1) },
  { key: 'unsubscribe_rate', name: 'unsubscribe rate', color: seriesColor(5) },
] as const;

/** Rates per campaign as bars; counts and rates in the table (view campaign_performance). */
export function campaignSection(c: ReportData['campaigns']): string {
  const shown = c.total > c.rows.length ? ` The latest ${c.rows.length} of ${c.total} campaigns.` : '';
  const head = `<h2>Campaign performance</h2><p class="note">Rates are shares of the emails sent (view <code>campaign_performance</code>).${esc(shown)}</p>`;
  if (c.rows.length === 0) return `<section id="campaigns">${head}<p class="empty">No campaigns synced yet.</p></section>`;
  const groups = c.rows.map((r) => ({
    label: r.title ?? `#${r.id}`,
    bars: RATES.map((k) => ({ series: k.name, value: r[k.key], color: k.color, text: fmtRate(r[k.key]) })),
  }));
  const chart = barChart({ id: 'campaign-rates', title: 'Open, click and unsubscribe rate per campaign', groups, legend: RATES.map((k) => ({ name: k.name, color: k.color })) });
  const table = dataTable({
    id: 'campaigns-table',
    caption: 'Campaign counters and rates',
    rows: c.rows,
    columns: [
      { key: 'title', label: 'campaign', cell: (r) => r.title ?? `#${r.id}` },
      { key: 'status', label: 'status', cell: (r) => r.status ?? '' },
      { key: 'sent', label: 'sent', numeric: true, cell: (r) => fmtInt(r.sent) },
      { key: 'opens', label: 'opens', numeric: true, cell: (r) => fmtInt(r.opens) },
      { key: 'clicks', label: 'clicks', numeric: true, cell: (r) => fmtInt(r.clicks) },
      { key: 'unsubscribes', label: 'unsubscribes', numeric: true, cell: (r) => fmtInt(r.unsubscribes) },
      { key: 'open_rate', label: 'open rate', numeric: true, cell: (r) => fmtRate(r.open_rate) },
      { key: 'click_rate', label: 'click rate', numeric: true, cell: (r) => fmtRate(r.click_rate) },
      { key: 'unsubscribe_rate', label: 'unsubscribe rate', numeric: true, cell: (r) => fmtRate(r.unsubscribe_rate) },
    ],
  });
  return `<section id="campaigns">${head}${chart}${table}</section>`;
}
