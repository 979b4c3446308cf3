import { afterEach, describe, expect, it } from 'vitest';
import { LAKE_TABLES, listMigrations, withWarehouse } from '../../src/warehouse/index.js';
import { findSqlDir } from '../../src/warehouse/sql-dir.js';
import { tempPaths } from './temp-warehouse.js';

const paths: { cleanup(): void }[] = [];
afterEach(() => paths.splice(0).forEach((p) => p.cleanup()));

const SCHEMA = `SELECT table_name, column_name, data_type, ordinal_position FROM information_schema.columns ORDER BY ALL`;
const VIEWS = `SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY view_name`;

describe('migrate', () => {
  it("applies every numbered file once (also other modules' numbers) and a second run changes nothing", async () => {
    const p = tempPaths();
    paths.push(p);
    const files = listMigrations(findSqlDir());
    const first = await withWarehouse({ ...p, write: true }, async (w) => ({
      schema: await w.query(SCHEMA),
      views: await w.query(VIEWS),
      ledger: await w.query('SELECT version, name, checksum, applied_at FROM _migrations ORDER BY version'),
    }));
    expect(first.ledger.map((r) => r.name)).toEqual(files.map((f) => f.name));
    const tables = new Set(first.schema.map((r) => r.table_name));
    for (const t of [
      'contacts',
      'contacts_history',
      'contact_tags',
      'contact_lists',
      'tags',
      'lists',
      'companies',
      'custom_fields',
      'campaigns',
      'funnels',
      'funnel_subscribers',
      'report_overview',
      'report_automation_step_rows',
      'webhook_events',
      '_sync_state',
      '_sync_runs',
      '_migrations',
    ]) {
      expect(tables, t).toContain(t);
    }
    for (const v of [
      'contacts_current',
      'campaign_performance',
      'funnel_step_dropoff',
      'subscriber_growth',
      'subscriber_growth_by_period',
      'tag_list_member_counts',
      'sync_run_health',
      'sync_stream_freshness',
      'sync_failures',
      'webhook_lag_daily',
      'webhook_dead_letters_open',
    ]) {
      expect(first.views.map((r) => r.view_name)).toContain(v);
    }

    const second = await withWarehouse({ ...p, write: true }, async (w) => {
      await w.migrate();
      return { schema: await w.query(SCHEMA), views: await w.query(VIEWS), ledger: await w.query('SELECT version, name, checksum, applied_at FROM _migrations ORDER BY version') };
    });
    expect(second).toEqual(first);
  });

  it('every data table of the warehouse carries _load_id and _synced_at', async () => {
    const p = tempPaths();
    paths.push(p);
    // webhook_dead_letters is the applier's record of deliveries set aside, not loaded data.
    const mine = Object.keys(LAKE_TABLES).filter((t) => !t.startsWith('_') && t !== 'webhook_dead_letters');
    const rows = await withWarehouse({ ...p, write: true }, (w) => w.query(`SELECT table_name, list(column_name) AS cols FROM information_schema.columns GROUP BY table_name`));
    const cols = new Map(rows.map((r) => [String(r.table_name), r.cols as string[]]));
    for (const t of mine) {
      expect(cols.get(t), t).toEqual(expect.arrayContaining(['_load_id', '_synced_at']));
    }
  });
});
