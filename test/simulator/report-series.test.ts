import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bucketSeries, seriesFrequency } from '../../src/simulator/report-series.js';
import { sharedFixtureDir } from '../helpers/shared-fixtures.js';

const stats = (name: string): Record<string, number> => (JSON.parse(readFileSync(join(sharedFixtureDir(), `${name}.json`), 'utf8')) as { body: { stats: Record<string, number> } }).body.stats;

describe('report series keys as fluentcrm-2.9 lays them out', () => {
  it('daily up to 62 days, weekly up to 92, monthly beyond', () => {
    expect(seriesFrequency('2026-10-27', '2026-11-25')).toBe('daily');
    expect(seriesFrequency('2026-09-24', '2026-11-25')).toBe('daily'); // 62 days
    expect(seriesFrequency('2026-09-11', '2026-11-25')).toBe('weekly'); // 75 days
    expect(seriesFrequency('2026-08-25', '2026-11-25')).toBe('weekly'); // 92 days
    expect(seriesFrequency('2025-11-26', '2026-11-25')).toBe('monthly');
  });

  it('daily: a zero per day from `from`, the end day excluded, counts on their day', () => {
    const want = stats('site-ny/GET_reports_subscribers_date_range_30_days');
    const got = bucketSeries('2026-10-27', '2026-11-25', [
      { day: '2026-10-28', n: 7 },
      { day: '2026-11-25', n: 63 }, // the end day: left out, as today's rows were in the capture
    ]);
    expect(Object.keys(got)).toEqual(Object.keys(want));
    expect(got['2026-10-28']).toBe(7);
  });

  it('weekly: the week steps from `from`, then each Sunday-started week under its first row day, appended when no step matches', () => {
    const want = stats('site-ny/GET_reports_subscribers_date_range_75_days');
    // One row day per captured group, first in table order; counts as captured.
    const rows = Object.entries(want)
      .filter(([, n]) => n > 0)
      .map(([day, n]) => ({ day, n }));
    const got = bucketSeries('2026-09-11', '2026-11-25', rows);
    expect(got).toEqual(want);
    expect(Object.keys(got)).toEqual(Object.keys(want)); // zero-valued steps first, then the extra keys by week
    // Two rows in one week: one key, the first row's day, with their sum.
    expect(
      bucketSeries('2026-09-11', '2026-11-25', [
        { day: '2026-09-16', n: 2 },
        { day: '2026-09-14', n: 3 },
      ])['2026-09-16'],
    ).toBe(5);
  });

  it('monthly: "Mon YYYY" steps from `from`; a month after the last step only when it has rows', () => {
    const sents = stats('site-ny/GET_reports_email-sents_date_range_365_days');
    expect(Object.keys(bucketSeries('2025-11-26', '2026-11-25', []))).toEqual(Object.keys(sents));
    const subs = stats('site-ny/GET_reports_subscribers_date_range_365_days');
    const got = bucketSeries('2025-11-26', '2026-11-25', [
      { day: '2025-11-27', n: 12 },
      { day: '2026-11-02', n: 61 },
    ]);
    expect(Object.keys(got)).toEqual(Object.keys(subs));
    expect(got).toMatchObject({ 'Nov 2025': 12, 'Nov 2026': 61 });
    // A whole calendar year: twelve steps, December included although it has no rows (root capture).
    expect(Object.keys(bucketSeries('2026-01-01', '2026-12-31', []))).toEqual(Object.keys(stats('GET_reports_subscribers_date_range_monthly')));
  });
});
