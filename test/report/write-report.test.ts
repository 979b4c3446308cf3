import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Campaign } from '../../src/crm/types.js';
import { writeReport } from '../../src/report/write-report.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { ctx, tempPaths, writeScope } from '../warehouse/temp-warehouse.js';

let p: ReturnType<typeof tempPaths> | undefined;
afterEach(() => p?.cleanup());

const campaign: Campaign = {
  id: 3, title: 'Spring', slug: 'spring', status: 'sent', email_subject: 'Hi', email_pre_header: null, recipients_count: 1000,
  scheduled_at: '2026-03-01T10:00:00.000Z', design_template: 'simple', created_at: null, updated_at: null,
  stats: { total: 1000, sent: 1000, clicks: 40, views: 300, unsubscribers: 12 }, raw: {},
};

describe('writeReport', () => {
  it("reads this version's views from a file an older crmsync migrated, without writing to it", async () => {
    p = tempPaths();
    await writeScope(p, async (w) => {
      await w.loadEntities('campaigns', [campaign], ctx(), { complete: true });
      // As an older crmsync left it: campaign_performance without unsubscribes, no report views.
      await w.connection.run(`CREATE OR REPLACE VIEW campaign_performance AS SELECT id, title, status, scheduled_at, created_at,
        TRY_CAST(stats->>'sent' AS BIGINT) AS sent, NULL::BIGINT AS opens, NULL::BIGINT AS clicks, NULL::BIGINT AS unsubscribes,
        NULL::DOUBLE AS open_rate, NULL::DOUBLE AS click_rate, NULL::DOUBLE AS unsubscribe_rate FROM campaigns`);
      await w.connection.run('DROP VIEW sync_run_health');
    });
    const out = join(p.dir, 'r.html');
    const written = await writeReport({ dbPath: p.dbPath, lakePath: p.lakePath, out, now: new Date('2026-04-01T00:00:00Z') });
    expect(written).toMatchObject({ path: out, source: { kind: 'duckdb', readOnly: true } });
    const html = await readFile(out, 'utf8');
    expect(html).toMatch(/<td data-col="unsubscribes" class="num">12<\/td>/);
    expect(html).toMatch(/<td data-col="unsubscribe_rate" class="num">1\.2%<\/td>/);
    expect(html).not.toMatch(/Not in this warehouse/);
    // The file is untouched: the view dropped above is still missing from it.
    const stored = await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: false }, (w) => w.query(`SELECT count(*) AS n FROM duckdb_views() WHERE view_name = 'sync_run_health'`));
    expect(stored).toEqual([{ n: 0 }]);
  });

  it('reads the published Parquet lake when there is no warehouse file to open', async () => {
    p = tempPaths();
    await writeScope(p, async (w) => {
      await w.loadEntities('campaigns', [campaign], ctx(), { complete: true });
      await w.recordRun({ runId: 'r1', stream: 'campaigns', mode: 'backfill', startedAt: new Date('2026-03-01T10:00:00Z'), finishedAt: new Date('2026-03-01T10:00:02.5Z'), status: 'succeeded', pages: 1, requests: 1, inserted: 1, updated: 0, unchanged: 0, deleted: 0, error: null });
      await w.publishLake();
    });
    const out = join(p.dir, 'lake.html');
    const written = await writeReport({ dbPath: join(p.dir, 'elsewhere.duckdb'), lakePath: p.lakePath, out, now: new Date('2026-03-01T12:00:02.500Z') });
    expect(written.source).toMatchObject({ kind: 'lake', path: p.lakePath });
    const html = await readFile(out, 'utf8');
    expect(html).toMatch(/from the Parquet lake/);
    expect(html).toMatch(/<td data-col="unsubscribes" class="num">12<\/td>/);
    expect(html).toMatch(/<td data-col="duration_s" class="num">2\.5 s<\/td>/);
    expect(html).toMatch(/<td data-col="age" class="num">2\.0 h<\/td>/);
  });
});
