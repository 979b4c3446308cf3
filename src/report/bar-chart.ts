import { esc } from './format.js';
import { CHART_WIDTH, clip, FONT, legend, niceMax, svgFrame, type LegendItem } from './svg-frame.js';

export interface Bar {
  series: string;
  value: number | null;
  color: string;
  /** The figure printed after the bar. */
  text: string;
}

export interface BarGroup {
  label: string;
  bars: Bar[];
}

const LABEL_WIDTH = 150;
const TEXT_WIDTH = 64;
const BAR = 13;
const GAP = 9;

/**
 * Horizontal bars, one group per row (a campaign, a funnel step, a tag), one bar per series in
 * the group; a null value draws no bar. Bars of a chart share one scale.
 */
export function barChart(opts: { id: string; title: string; groups: readonly BarGroup[]; legend?: readonly LegendItem[]; max?: number }): string {
  const values = opts.groups.flatMap((g) => g.bars.map((b) => b.value ?? 0));
  const max = opts.max ?? niceMax(Math.max(0, ...values));
  const span = CHART_WIDTH - LABEL_WIDTH - TEXT_WIDTH;
  const parts: string[] = [];
  let y = 4;
  let marks = 0;
  for (const g of opts.groups) {
    const h = g.bars.length * BAR;
    parts.push(`<text class="label" x="${LABEL_WIDTH - 6}" y="${(y + h / 2 + FONT / 3).toFixed(1)}" text-anchor="end"><title>${esc(g.label)}</title>${clip(g.label, 18)}</text>`);
    g.bars.forEach((b, i) => {
      const by = y + i * BAR;
      if (b.value !== null) {
        const w = Math.max(0, Math.min(1, b.value / max)) * span;
        parts.push(
          `<rect class="mark" data-series="${esc(b.series)}" data-label="${esc(g.label)}" data-value="${b.value}" x="${LABEL_WIDTH}" y="${by + 1}" width="${w.toFixed(1)}" height="${BAR - 2}" fill="${esc(b.color)}"><title>${esc(`${g.label}, ${b.series}: ${b.text}`)}</title></rect>`,
        );
        marks += 1;
        parts.push(`<text class="value" x="${(LABEL_WIDTH + w + 4).toFixed(1)}" y="${by + BAR - 3}">${esc(b.text)}</text>`);
      } else {
        parts.push(`<text class="value muted" x="${LABEL_WIDTH + 4}" y="${by + BAR - 3}">${esc(b.text)}</text>`);
      }
    });
    y += h + GAP;
  }
  parts.unshift(`<line class="axis-line" x1="${LABEL_WIDTH}" x2="${LABEL_WIDTH}" y1="0" y2="${y}"/>`);
  return legend(opts.legend ?? []) + svgFrame({ id: opts.id, title: opts.title, height: Math.max(y, 24), marks, body: parts.join('') });
}
