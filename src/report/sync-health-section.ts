import type { ReportData, RunRow } from '../warehouse/report-data.js';
import { barChart } from './bar-chart.js';
import { dataTable } from './data-table.js';
import { esc, fmtAge, fmtInt, fmtSeconds, fmtTime } from './format.js';
import { FAILED_COLOR, seriesColor } from './palette.js';
import { scatterChart } from './scatter-chart.js';

/** Runs over time, volume per stream, freshness and failures, from `_sync_runs` (views sync_*). */
export function syncHealthSection(data: Pick<ReportData, 'runs' | 'freshness' | 'failures'>, now: Date): string {
  const head = `<h2>Sync health</h2>`;
  if (data.runs.rows.length === 0 && data.freshness.length === 0) return `<section id="sync-health">${head}<p class="empty">No sync has run yet.</p></section>`;
  return `<section id="sync-health">${head}${runs(data.runs)}${volume(data.runs.rows)}${freshness(data.freshness, now)}${failures(data.failures)}</section>`;
}

function streamColors(rows: readonly { stream: string }[]): Map<string, string> {
  return new Map([...new Set(rows.map((r) => r.stream))].sort().map((s, i) => [s, seriesColor(i)]));
}

function runs(r: ReportData['runs']): string {
  const colors = streamColors(r.rows);
  const finished = r.rows.filter((x) => x.duration_s !== null);
  const shown = r.totalRuns > 0 ? `The latest ${Math.min(r.totalRuns, new Set(r.rows.map((x) => x.run_id)).size)} of ${r.totalRuns} runs (view <code>sync_run_health</code>).` : '';
  const chart = scatterChart({
    id: 'sync-runs',
    title: 'Duration of each stream run over time',
    format: (n) => `${n.toFixed(n < 10 ? 1 : 0)} s`,
    series: [...colors].map(([name, color]) => ({ name, color })),
    dots: finished.map((x) => ({
      series: x.stream,
      color: colors.get(x.stream)!,
      at: x.started_at,
      value: x.duration_s!,
      failed: x.status === 'failed',
      tip: `${x.stream} ${x.mode} ${x.status} at ${fmtTime(x.started_at)}: ${fmtSeconds(x.duration_s)}, ${fmtInt(x.rows_read)} rows, ${fmtInt(x.requests)} requests`,
    })),
  });
  const table = dataTable<RunRow>({
    id: 'sync-runs-table',
    caption: 'Stream runs',
    rows: r.rows,
    columns: [
      { key: 'started_at', label: 'started (UTC)', cell: (x) => fmtTime(x.started_at) },
      { key: 'stream', label: 'stream', cell: (x) => x.stream },
      { key: 'mode', label: 'mode', cell: (x) => x.mode },
      { key: 'status', label: 'status', cell: (x) => x.status },
      { key: 'duration_s', label: 'duration', numeric: true, cell: (x) => fmtSeconds(x.duration_s) },
      { key: 'rows_read', label: 'rows', numeric: true, cell: (x) => fmtInt(x.rows_read) },
      { key: 'requests', label: 'requests', numeric: true, cell: (x) => fmtInt(x.requests) },
    ],
  });
  return `<h3>Runs over time</h3><p class="note">${shown} Each dot is one stream's run; hollow dots failed.</p>${chart}${table}`;
}

function volume(rows: readonly RunRow[]): string {
  const streams = [...new Set(rows.map((r) => r.stream))].sort();
  if (streams.length === 0) return '';
  const sum = (s: string, k: 'rows_read' | 'requests'): number => rows.filter((r) => r.stream === s).reduce((a, r) => a + r[k], 0);
  const chart = (key: 'rows_read' | 'requests', label: string, color: string): string =>
    barChart({
      id: `sync-${key === 'rows_read' ? 'rows' : 'requests'}`,
      title: `${label} per stream over the runs shown`,
      groups: streams.map((s) => ({ label: s, bars: [{ series: label, value: sum(s, key), color, text: fmtInt(sum(s, key)) }] })),
    });
  return `<h3>Rows and requests per stream</h3><p class="note">Summed over the runs above; the runs table holds each run's figures.</p><div class="pair"><div><h4>Rows read</h4>${chart('rows_read', 'Rows read', seriesColor(0))}</div><div><h4>Requests</h4>${chart('requests', 'Requests', seriesColor(1))}</div></div>`;
}

function freshness(rows: ReportData['freshness'], now: Date): string {
  const age = (d: Date | null): number | null => (d ? (now.getTime() - d.getTime()) / 1000 : null);
  const groups = rows.map((r) => {
    const a = age(r.last_success_at);
    return {
      label: r.stream,
      bars: [
        {
          series: 'hours since last success',
          value: a === null ? null : a / 3600,
          color: r.last_status === 'failed' ? FAILED_COLOR : seriesColor(2),
          text: a === null ? 'never succeeded' : fmtAge(a),
        },
      ],
    };
  });
  const chart = barChart({ id: 'sync-freshness', title: 'Time since each stream last succeeded', groups });
  const table = dataTable({
    id: 'sync-freshness-table',
    caption: `Freshness per stream at ${fmtTime(now)} UTC`,
    rows,
    columns: [
      { key: 'stream', label: 'stream', cell: (r) => r.stream },
      { key: 'last_success_at', label: 'last success (UTC)', cell: (r) => fmtTime(r.last_success_at) },
      { key: 'age', label: 'age', numeric: true, cell: (r) => fmtAge(age(r.last_success_at)) },
      { key: 'last_status', label: 'last run', cell: (r) => r.last_status },
      { key: 'runs', label: 'runs', numeric: true, cell: (r) => fmtInt(r.runs) },
      { key: 'failed_runs', label: 'failed', numeric: true, cell: (r) => fmtInt(r.failed_runs) },
    ],
  });
  return `<h3>Freshness</h3><p class="note">Time since each stream's last successful run, when this report was made (view <code>sync_stream_freshness</code>); red when its latest run failed.</p>${chart}${table}`;
}

function failures(f: ReportData['failures']): string {
  const shown = f.total > f.rows.length ? ` The latest ${f.rows.length} of ${f.total}.` : '';
  const table = dataTable({
    id: 'sync-failures-table',
    caption: 'Failed stream runs',
    rows: f.rows,
    empty: 'No failed runs.',
    columns: [
      { key: 'started_at', label: 'started (UTC)', cell: (r) => fmtTime(r.started_at) },
      { key: 'stream', label: 'stream', cell: (r) => r.stream },
      { key: 'mode', label: 'mode', cell: (r) => r.mode },
      { key: 'error', label: 'message', wrap: true, cell: (r) => r.error ?? '' },
    ],
  });
  return `<h3>Failures</h3><p class="note">Failed runs with their messages (view <code>sync_failures</code>).${esc(shown)}</p>${table}`;
}
