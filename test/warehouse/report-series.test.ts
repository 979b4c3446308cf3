import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportTableFor, type WarehouseHandle } from '../../src/warehouse/index.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from './temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
});
afterAll(() => closeTempWarehouse({ p, w }));

describe('report snapshots of the real plugin (fluentcrm-2.9 report routes)', () => {
  it('land in the tables of the same data, or in the tables of migration 050', () => {
    expect(reportTableFor('dashboard_stats')).toBe('report_dashboard_stats');
    expect(reportTableFor('subscribers')).toBe('report_subscriber_growth');
    expect(reportTableFor('email_sents')).toBe('report_email_activity');
    expect(reportTableFor('email-clicks')).toBe('report_email_activity');
    expect(reportTableFor('funnel_report')).toBe('report_automation_steps');
    expect(reportTableFor('funnels/2/report')).toBe('report_automation_steps');
  });

  it('flattens daily and monthly series, an empty `stats: []`, and the interface growth list', async () => {
    await w.insertReportSnapshot({ report: 'subscribers', params: {}, data: { stats: { '2026-11-24': 0, '2026-11-25': 63 } } }, ctx());
    await w.insertReportSnapshot({ report: 'email_opens', params: {}, data: { stats: { 'Nov 2025': 4, 'Dec 2025': 0 } } }, ctx());
    await w.insertReportSnapshot({ report: 'email_clicks', params: {}, data: { stats: [] } }, ctx());
    await w.insertReportSnapshot({ report: 'subscriber_growth', params: {}, data: { group_by: 'day', growth: [{ date: '2026-01-02', count: 7 }] } }, ctx());
    expect(await w.query(`SELECT report, period_key, strftime(day, '%Y-%m-%d') AS day, period, count FROM report_daily_counts ORDER BY report, day`)).toEqual([
      { report: 'email_opens', period_key: 'Nov 2025', day: '2025-11-01', period: 'month', count: 4 },
      { report: 'email_opens', period_key: 'Dec 2025', day: '2025-12-01', period: 'month', count: 0 },
      { report: 'subscriber_growth', period_key: '2026-01-02', day: '2026-01-02', period: 'day', count: 7 },
      { report: 'subscribers', period_key: '2026-11-24', day: '2026-11-24', period: 'day', count: 0 },
      { report: 'subscribers', period_key: '2026-11-25', day: '2026-11-25', period: 'day', count: 63 },
    ]);
    expect(await w.query(`SELECT count(*) AS n FROM report_email_activity`)).toEqual([{ n: 2 }]);
  });

  it('feeds funnel_step_dropoff from /funnels/{id}/report (`stats.metrics`)', async () => {
    const metrics = [
      { label: 'Entrance', count: 40, sequence_id: 0, type: 'root', percent: 100, percent_text: 100, previous_step_count: 40, drop_count: 0, drop_percent: 0 },
      { label: 'Tag as Customer', count: 30, sequence_id: 1, type: 'action', percent: 75, percent_text: 75, previous_step_count: 40, drop_count: 10, drop_percent: 25 },
    ];
    await w.insertReportSnapshot({ report: 'funnel_report', params: { funnel_id: 7 }, data: { stats: { metrics, total_revenue: 0 } } }, ctx());
    expect(await w.query('SELECT funnel_id, label, reached, dropped, percent_of_entrants FROM funnel_step_dropoff WHERE funnel_id = 7')).toEqual([
      { funnel_id: 7, label: 'Entrance', reached: 40, dropped: 0, percent_of_entrants: 100 },
      { funnel_id: 7, label: 'Tag as Customer', reached: 30, dropped: 10, percent_of_entrants: 75 },
    ]);
  });
});
