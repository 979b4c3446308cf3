import { esc, fmtTime } from './format.js';
import { FAILED_COLOR } from './palette.js';
import { CHART_WIDTH, FONT, legend, niceMax, svgFrame, yGrid, type LegendItem } from './svg-frame.js';

export interface Dot {
  series: string;
  color: string;
  at: Date;
  value: number;
  failed: boolean;
  tip: string;
}

const LEFT = 56;
const RIGHT = CHART_WIDTH - 12;
const TOP = 8;
const HEIGHT = 220;
const BOTTOM = HEIGHT - 22;

/** Dots over time (a run of a stream at its start, at the height of its duration); failed ones hollow. */
export function scatterChart(opts: { id: string; title: string; dots: readonly Dot[]; series: readonly LegendItem[]; format: (n: number) => string }): string {
  const times = opts.dots.map((d) => d.at.getTime());
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const max = niceMax(Math.max(0, ...opts.dots.map((d) => d.value)));
  const x = (t: number): number => (t1 === t0 ? (LEFT + RIGHT) / 2 : LEFT + ((RIGHT - LEFT) * (t - t0)) / (t1 - t0));
  const y = (v: number): number => BOTTOM - ((BOTTOM - TOP) * v) / max;
  const dots = opts.dots.map(
    (d) =>
      `<circle class="mark${d.failed ? ' failed' : ''}" data-series="${esc(d.series)}" data-value="${d.value}" cx="${x(d.at.getTime()).toFixed(1)}" cy="${y(d.value).toFixed(1)}" r="4" fill="${d.failed ? '#fff' : esc(d.color)}" stroke="${d.failed ? FAILED_COLOR : esc(d.color)}" stroke-width="${d.failed ? 2 : 1}"><title>${esc(d.tip)}</title></circle>`,
  );
  const axis = opts.dots.length
    ? `<text class="axis" x="${LEFT}" y="${BOTTOM + FONT + 4}">${esc(fmtTime(new Date(t0)))}</text>` +
      (t1 > t0 ? `<text class="axis" x="${RIGHT}" y="${BOTTOM + FONT + 4}" text-anchor="end">${esc(fmtTime(new Date(t1)))}</text>` : '')
    : '';
  const items = [...opts.series, ...(opts.dots.some((d) => d.failed) ? [{ name: 'failed (hollow)', color: FAILED_COLOR }] : [])];
  return (
    legend(items) +
    svgFrame({
      id: opts.id,
      title: opts.title,
      height: HEIGHT,
      marks: dots.length,
      body: yGrid({ max, top: TOP, bottom: BOTTOM, left: LEFT, right: RIGHT, format: opts.format }) + dots.join('') + axis,
    })
  );
}
