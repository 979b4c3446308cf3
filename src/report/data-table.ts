import { esc } from './format.js';

export interface Column<R> {
  key: string;
  label: string;
  /** Right-aligned figures; text otherwise. */
  numeric?: boolean;
  /** Long text (messages) that wraps; other cells stay on one line and the table scrolls. */
  wrap?: boolean;
  cell: (row: R) => string;
}

/**
 * The figures under a chart as a plain table (selectable, and copied as tab-separated text by its
 * button). Cells carry their column key so tests can read the figures back.
 */
export function dataTable<R>(opts: { id: string; caption: string; columns: readonly Column<R>[]; rows: readonly R[]; empty?: string }): string {
  if (opts.rows.length === 0) return `<p class="empty">${esc(opts.empty ?? 'No data yet.')}</p>`;
  const head = opts.columns.map((c) => `<th scope="col"${c.numeric ? ' class="num"' : ''}>${esc(c.label)}</th>`).join('');
  const body = opts.rows
    .map((r) => `<tr>${opts.columns.map((c) => `<td data-col="${esc(c.key)}"${c.numeric ? ' class="num"' : c.wrap ? ' class="wrap"' : ''}>${esc(c.cell(r))}</td>`).join('')}</tr>`)
    .join('\n');
  return `<div class="table-box"><button type="button" class="copy" data-copy="${esc(opts.id)}">Copy table</button><div class="table-scroll"><table id="${esc(opts.id)}" data-table="${esc(opts.id)}"><caption>${esc(opts.caption)}</caption><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table></div></div>`;
}
