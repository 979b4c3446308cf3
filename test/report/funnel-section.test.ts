import { describe, expect, it } from 'vitest';
import { funnelSection } from '../../src/report/funnel-section.js';
import type { FunnelStepRow } from '../../src/warehouse/report-data.js';

const step = (sequence_id: number, label: string, reached: number, percent_of_entrants: number): FunnelStepRow => ({
  funnel_id: 7,
  funnel_title: 'Welcome',
  sequence_id,
  label,
  reached,
  dropped: null,
  drop_percent: null,
  percent_of_entrants,
});

/** The "% of entrants" cells of the funnel's table, in order. */
function percentCells(html: string): string[] {
  return [...html.matchAll(/<td data-col="percent_of_entrants"[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]!);
}

describe('funnel section', () => {
  it('rounds the share of entrants once, from the counts', () => {
    // 20 of 17 entrants is 117.647 %: the view holds 117.65, and rounding that again gave 117.7.
    const html = funnelSection([step(0, 'Entered', 17, 100), step(1, 'Benchmark', 20, 117.65), step(2, 'Email', 3, 17.65)]);
    expect(percentCells(html)).toEqual(['100.0%', '117.6%', '17.6%']);
  });
});
