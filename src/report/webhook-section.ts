import type { ReportData } from '../warehouse/report-data.js';
import { barChart } from './bar-chart.js';
import { dataTable } from './data-table.js';
import { esc, fmtInt, fmtSeconds, fmtTime } from './format.js';
import { seriesColor } from './palette.js';

const LAGS = [
  { key: 'delivery_lag_p50_s', name: 'delivery lag, median', color: seriesColor(0) },
  { key: 'delivery_lag_p95_s', name: 'delivery lag, p95', color: seriesColor(4) },
  { key: 'apply_lag_p50_s', name: 'apply lag, median', color: seriesColor(1) },
] as const;

/** Webhook delivery and apply lag per day, and dead letters (views webhook_lag_daily, webhook_dead_letters_open). */
export function webhookSection(w: ReportData['webhooks']): string {
  const head = `<h2>Webhooks</h2>`;
  if (w === null) return `<section id="webhooks">${head}<p class="empty">This warehouse has no webhook tables.</p></section>`;
  if (w.lag.length === 0 && w.deadLetters.length === 0)
    return `<section id="webhooks">${head}<p class="empty">No webhook deliveries received: the receiver (<code>crmsync webhooks serve</code>) is not in use.</p></section>`;
  const note = `<p class="note">Delivery lag: from the event to its receipt; apply lag: from receipt to the warehouse. Per day, the latest ${w.lag.length} days with deliveries (view <code>webhook_lag_daily</code>).</p>`;
  const groups = w.lag.map((d) => ({ label: d.day, bars: LAGS.map((k) => ({ series: k.name, value: d[k.key], color: k.color, text: fmtSeconds(d[k.key]) })) }));
  const chart = barChart({ id: 'webhook-lag', title: 'Webhook lag per day', groups, legend: LAGS.map((k) => ({ name: k.name, color: k.color })) });
  const table = dataTable({
    id: 'webhook-lag-table',
    caption: 'Webhook deliveries and lag per day',
    rows: w.lag,
    columns: [
      { key: 'day', label: 'day', cell: (d) => d.day },
      { key: 'deliveries', label: 'deliveries', numeric: true, cell: (d) => fmtInt(d.deliveries) },
      { key: 'failed', label: 'failed', numeric: true, cell: (d) => fmtInt(d.failed) },
      { key: 'delivery_lag_p50_s', label: 'delivery lag median', numeric: true, cell: (d) => fmtSeconds(d.delivery_lag_p50_s) },
      { key: 'delivery_lag_p95_s', label: 'delivery lag p95', numeric: true, cell: (d) => fmtSeconds(d.delivery_lag_p95_s) },
      { key: 'apply_lag_p50_s', label: 'apply lag median', numeric: true, cell: (d) => fmtSeconds(d.apply_lag_p50_s) },
      { key: 'apply_lag_p95_s', label: 'apply lag p95', numeric: true, cell: (d) => fmtSeconds(d.apply_lag_p95_s) },
    ],
  });
  const shown = w.deadLetterTotal > w.deadLetters.length ? ` The latest ${w.deadLetters.length} of ${w.deadLetterTotal}.` : '';
  const dead = dataTable({
    id: 'webhook-dead-letters-table',
    caption: 'Dead letters: deliveries that could not be applied',
    rows: w.deadLetters,
    empty: 'No dead letters.',
    columns: [
      { key: 'received_at', label: 'received (UTC)', cell: (d) => fmtTime(d.received_at) },
      { key: 'event', label: 'event', cell: (d) => d.event ?? '' },
      { key: 'delivery_id', label: 'delivery', cell: (d) => d.delivery_id },
      { key: 'error', label: 'error', wrap: true, cell: (d) => d.error ?? '' },
    ],
  });
  return `<section id="webhooks">${head}${note}${chart}${table}<h3>Dead letters</h3><p class="note">Deliveries the applier set aside, with their error (view <code>webhook_dead_letters_open</code>); <code>crmsync webhooks dead-letters --retry</code> applies them again.${esc(shown)}</p>${dead}</section>`;
}
