import { esc } from './format.js';
import { CHART_WIDTH, FONT, legend, niceMax, svgFrame, yGrid } from './svg-frame.js';

export interface AreaSeries {
  name: string;
  color: string;
  values: readonly number[];
}

const LEFT = 56;
const RIGHT = CHART_WIDTH - 8;
const TOP = 8;
const HEIGHT = 240;
const BOTTOM = HEIGHT - 22;

/** Stacked areas over categorical x values (periods): one path per series, the first at the bottom. */
export function stackedAreaChart(opts: { id: string; title: string; labels: readonly string[]; series: readonly AreaSeries[] }): string {
  const n = opts.labels.length;
  const totals = opts.labels.map((_, i) => opts.series.reduce((s, x) => s + (x.values[i] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  // One period still draws an area: it spans the whole width.
  const x = (i: number): number => (n <= 1 ? (i === 0 ? LEFT : RIGHT) : LEFT + ((RIGHT - LEFT) * i) / (n - 1));
  const y = (v: number): number => BOTTOM - ((BOTTOM - TOP) * v) / max;
  const idx = n <= 1 ? [0, 0] : opts.labels.map((_, i) => i);
  const base = new Array<number>(n).fill(0);
  const paths: string[] = [];
  for (const s of opts.series) {
    const lower = idx.map((i, k) => `${x(n <= 1 ? k : i).toFixed(1)},${y(base[i] ?? 0).toFixed(1)}`);
    for (let i = 0; i < n; i++) base[i]! += s.values[i] ?? 0;
    const upper = idx.map((i, k) => `${x(n <= 1 ? k : i).toFixed(1)},${y(base[i] ?? 0).toFixed(1)}`);
    const d = `M${upper.join('L')}L${lower.reverse().join('L')}Z`;
    const last = s.values[n - 1] ?? 0;
    paths.push(`<path class="mark" data-series="${esc(s.name)}" data-points="${n}" data-last="${last}" d="${d}" fill="${esc(s.color)}"><title>${esc(s.name)}</title></path>`);
  }
  const ticks: string[] = [];
  const every = Math.max(1, Math.ceil((n - 1) / 4));
  // About five labels: every `every`-th period and the last, which pushes out a neighbour closer than a step.
  for (let i = 0; i < n - 1; i += every) {
    if (i > 0 && n - 1 - i < every) break;
    ticks.push(`<text class="axis" x="${x(i).toFixed(1)}" y="${BOTTOM + FONT + 4}" text-anchor="${i === 0 ? 'start' : 'middle'}">${esc(opts.labels[i])}</text>`);
  }
  if (n > 1) ticks.push(`<text class="axis" x="${RIGHT}" y="${BOTTOM + FONT + 4}" text-anchor="end">${esc(opts.labels[n - 1])}</text>`);
  else if (n === 1) ticks.push(`<text class="axis" x="${LEFT}" y="${BOTTOM + FONT + 4}">${esc(opts.labels[0])}</text>`);
  const body = yGrid({ max, top: TOP, bottom: BOTTOM, left: LEFT, right: RIGHT }) + paths.join('') + ticks.join('');
  return legend(opts.series.map((s) => ({ name: s.name, color: s.color }))) + svgFrame({ id: opts.id, title: opts.title, height: HEIGHT, marks: opts.series.length, body });
}
