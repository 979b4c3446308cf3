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

  it('a batch of snapshots (one transaction) flattens each into rows of its own, and marks each table for the lake', async () => {
    const load = ctx(new Date('2026-03-04T05:06:07Z'));
    const step = (label: string, count: number) => ({ label, count, sequence_id: count, type: 'action' });
    const added = await w.insertReportSnapshots(
      [
        { report: 'overview', params: {}, data: { total: 9 } },
        { report: 'reports/automations/21/steps', params: { funnel_id: 21 }, data: { stats: [step('a', 1), step('b', 2)] } },
        { report: 'subscribers', params: {}, data: { stats: { '2026-03-01': 5 } } },
        { report: 'funnels/22/report', params: { funnel_id: 22 }, data: { stats: { metrics: [step('c', 3)] } } },
        { report: 'subscriber-growth', params: {}, data: { growth: [{ date: '2026-03-02', count: 6 }] } },
      ],
      load,
    );
    expect(added).toBe(5);
    const batch = `_load_id = '${load.loadId}'`;
    expect(await w.query(`SELECT funnel_id, label, count FROM report_automation_step_rows WHERE ${batch} ORDER BY label`)).toEqual([
      { funnel_id: 21, label: 'a', count: 1 },
      { funnel_id: 21, label: 'b', count: 2 },
      { funnel_id: 22, label: 'c', count: 3 },
    ]);
    expect(await w.query(`SELECT report, period_key, count FROM report_daily_counts WHERE ${batch} ORDER BY report`)).toEqual([
      { report: 'subscriber_growth', period_key: '2026-03-02', count: 6 },
      { report: 'subscribers', period_key: '2026-03-01', count: 5 },
    ]);
    // Each flattened row points at its own snapshot.
    expect(
      await w.query(
        `SELECT count(*) AS n FROM report_automation_step_rows r JOIN report_automation_steps s USING (snapshot_id) WHERE r.${batch} AND s.report = CASE r.funnel_id WHEN 21 THEN 'reports/automations/21/steps' ELSE 'funnels/22/report' END`,
      ),
    ).toEqual([{ n: 3 }]);
    const ids = `SELECT snapshot_id FROM report_overview WHERE ${batch} UNION ALL SELECT snapshot_id FROM report_automation_steps WHERE ${batch} UNION ALL SELECT snapshot_id FROM report_subscriber_growth WHERE ${batch}`;
    expect(await w.query(`SELECT table_name, count(*) AS n FROM _lake_dirty WHERE part IN (${ids}) GROUP BY 1 ORDER BY 1`)).toEqual([
      { table_name: 'report_automation_step_rows', n: 2 },
      { table_name: 'report_automation_steps', n: 2 },
      { table_name: 'report_daily_counts', n: 2 },
      { table_name: 'report_overview', n: 1 },
      { table_name: 'report_subscriber_growth', n: 2 },
    ]);
    expect(await w.query(`SELECT epoch(snapshot_at) AS at FROM report_overview WHERE ${batch}`)).toEqual([{ at: Date.parse('2026-03-04T05:06:07Z') / 1000 }]);
  });
});
