import type { FunnelStepRow } from '../warehouse/report-data.js';
import { barChart } from './bar-chart.js';
import { dataTable } from './data-table.js';
import { esc, fmtInt, fmtPercent } from './format.js';
import { seriesColor } from './palette.js';

/** Per funnel: subscribers reaching each step, and how many dropped before it (view funnel_step_dropoff). */
export function funnelSection(rows: readonly FunnelStepRow[]): string {
  const head = `<h2>Funnel drop-off</h2><p class="note">Subscribers reaching each step of the latest step report per funnel, and how many dropped since the step before (view <code>funnel_step_dropoff</code>).</p>`;
  if (rows.length === 0) return `<section id="funnels">${head}<p class="empty">No funnel step reports synced yet.</p></section>`;
  const ids = [...new Set(rows.map((r) => r.funnel_id))];
  const parts = ids.map((id, i) => {
    const steps = rows.filter((r) => r.funnel_id === id);
    const title = steps[0]?.funnel_title ?? `Funnel #${id}`;
    const color = seriesColor(i);
    // From the counts (the root row comes first), not from the view's percent_of_entrants: that is
    // rounded to two places already, and one place more showed 20 of 17 entrants as 117.7 %.
    const entrants = steps[0]?.reached ?? null;
    const ofEntrants = (s: FunnelStepRow): number | null => (entrants && s.reached !== null ? (100 * Number(s.reached)) / Number(entrants) : s.percent_of_entrants);
    const groups = steps.map((s) => ({
      label: s.label ?? `step ${s.sequence_id}`,
      bars: [{ series: 'reached', value: s.reached, color, text: `${fmtInt(s.reached)}${s.dropped ? ` (−${fmtInt(s.dropped)})` : ''}` }],
    }));
    const chart = barChart({ id: `funnel-${id}`, title: `${title}: subscribers reaching each step`, groups });
    const table = dataTable({
      id: `funnel-${id}-table`,
      caption: `${title}: steps`,
      rows: steps,
      columns: [
        { key: 'label', label: 'step', cell: (s) => s.label ?? `step ${s.sequence_id}` },
        { key: 'reached', label: 'reached', numeric: true, cell: (s) => fmtInt(s.reached) },
        { key: 'dropped', label: 'dropped', numeric: true, cell: (s) => fmtInt(s.dropped) },
        { key: 'drop_percent', label: 'drop %', numeric: true, cell: (s) => fmtPercent(s.drop_percent) },
        { key: 'percent_of_entrants', label: '% of entrants', numeric: true, cell: (s) => fmtPercent(ofEntrants(s)) },
      ],
    });
    return `<div class="funnel"><h3>${esc(title)}</h3>${chart}${table}</div>`;
  });
  return `<section id="funnels">${head}${parts.join('')}</section>`;
}
