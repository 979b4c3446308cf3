import { esc, fmtInt } from './format.js';

/** Width of every chart's coordinate system; the SVG scales to its container (phones included). */
export const CHART_WIDTH = 480;
export const FONT = 12;

export interface LegendItem {
  name: string;
  color: string;
}

/** An SVG scaled to its container; `marks` is how many data marks it holds (tests compare it with the data). */
export function svgFrame(opts: { id: string; title: string; height: number; marks: number; body: string }): string {
  return `<svg class="chart" data-chart="${esc(opts.id)}" data-marks="${opts.marks}" viewBox="0 0 ${CHART_WIDTH} ${opts.height}" role="img" aria-label="${esc(opts.title)}"><title>${esc(opts.title)}</title>${opts.body}</svg>`;
}

export function legend(items: readonly LegendItem[]): string {
  if (items.length === 0) return '';
  return `<ul class="legend">${items.map((i) => `<li><span class="swatch" style="background:${esc(i.color)}"></span>${esc(i.name)}</li>`).join('')}</ul>`;
}

/** A round upper bound for an axis: 1, 2, 2.5 or 5 times a power of ten, at least `value`. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const pow = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * pow >= value) return m * pow;
  return 10 * pow;
}

/** Horizontal grid lines with their values on the left, for a vertical axis from 0 to max. */
export function yGrid(opts: { max: number; top: number; bottom: number; left: number; right: number; format?: (n: number) => string }): string {
  const fmt = opts.format ?? fmtInt;
  const out: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = (opts.max * i) / 4;
    const y = opts.bottom - ((opts.bottom - opts.top) * i) / 4;
    out.push(`<line class="grid" x1="${opts.left}" x2="${opts.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`);
    out.push(`<text class="axis" x="${opts.left - 4}" y="${(y + FONT / 3).toFixed(1)}" text-anchor="end">${esc(fmt(v))}</text>`);
  }
  return out.join('');
}

/** Shortens a label to fit a column, keeping the whole in a tooltip. */
export function clip(label: string, max: number): string {
  return label.length <= max ? esc(label) : `${esc(label.slice(0, max - 1))}…`;
}
