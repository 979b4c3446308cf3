import type { TaxonomyRow } from '../warehouse/report-data.js';
import { barChart } from './bar-chart.js';
import { dataTable } from './data-table.js';
import { esc, fmtChange, fmtInt, fmtTime } from './format.js';
import { seriesColor } from './palette.js';

const KINDS = [
  { kind: 'tag', title: 'Tags', color: seriesColor(0) },
  { kind: 'list', title: 'Lists', color: seriesColor(2) },
] as const;

/** Members per tag and list, with the change since the previous contacts sync (view tag_list_member_counts). */
export function taxonomySection(rows: readonly TaxonomyRow[]): string {
  const prev = rows.find((r) => r.previous_sync_at)?.previous_sync_at ?? null;
  const since = prev ? `the previous contacts sync (${fmtTime(prev)} UTC)` : 'the previous contacts sync (none yet: changes show from the second sync on)';
  const head = `<h2>Tags and lists</h2><p class="note">Contacts holding each tag and list, and the change since ${esc(since)} (view <code>tag_list_member_counts</code>).</p>`;
  const parts = KINDS.map((k) => {
    const mine = rows.filter((r) => r.kind === k.kind);
    if (mine.length === 0) return `<h3>${k.title}</h3><p class="empty">No ${k.kind}s synced yet.</p>`;
    const groups = mine.map((r) => ({
      label: r.title,
      bars: [{ series: 'members', value: r.members, color: k.color, text: r.change === null ? fmtInt(r.members) : `${fmtInt(r.members)} (${fmtChange(r.change)})` }],
    }));
    const chart = barChart({ id: `${k.kind}s`, title: `Members per ${k.kind}`, groups });
    const table = dataTable({
      id: `${k.kind}s-table`,
      caption: `${k.title}: members now and at the previous sync`,
      rows: mine,
      columns: [
        { key: 'title', label: k.kind, cell: (r) => r.title },
        { key: 'members', label: 'members', numeric: true, cell: (r) => fmtInt(r.members) },
        { key: 'previous_members', label: 'previous sync', numeric: true, cell: (r) => fmtInt(r.previous_members) },
        { key: 'change', label: 'change', numeric: true, cell: (r) => fmtChange(r.change) },
        { key: 'crm_subscribers', label: 'CRM count', numeric: true, cell: (r) => fmtInt(r.crm_subscribers) },
      ],
    });
    return `<h3>${k.title}</h3>${chart}${table}`;
  });
  return `<section id="taxonomy">${head}${parts.join('')}</section>`;
}
