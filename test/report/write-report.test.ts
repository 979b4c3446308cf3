import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Campaign } from '../../src/crm/types.js';
import { writeReport } from '../../src/report/write-report.js';
import { openWarehouse } from '../../src/warehouse/index.js';
import { ctx, tempPaths, writeScope } from '../warehouse/temp-warehouse.js';

let p: ReturnType<typeof tempPaths> | undefined;
afterEach(() => p?.cleanup());

const campaign: Campaign = {
  id: 3,
  title: 'Spring',
  slug: 'spring',
  status: 'sent',
  email_subject: 'Hi',
  email_pre_header: null,
  recipients_count: 1000,
  scheduled_at: '2026-03-01T10:00:00.000Z',
  design_template: 'simple',
  created_at: null,
  updated_at: null,
  stats: { total: 1000, sent: 1000, clicks: 40, views: 300, unsubscribers: 12 },
  raw: {},
};

describe('writeReport', () => {
  it("reads the lake's catalog, never the warehouse file", async () => {
    p = tempPaths();
    await writeScope(p, async (w) => {
      await w.loadEntities('campaigns', [campaign], ctx(), { complete: true });
      await w.recordRun({
        runId: 'r1',
        stream: 'campaigns',
        mode: 'backfill',
        startedAt: new Date('2026-03-01T10:00:00Z'),
        finishedAt: new Date('2026-03-01T10:00:02.5Z'),
        status: 'succeeded',
        pages: 1,
        requests: 1,
        inserted: 1,
        updated: 0,
        unchanged: 0,
        deleted: 0,
        error: null,
      });
      await w.publishLake();
    });
    const out = join(p.dir, 'lake.html');
    // Held open as a running worker holds it: the report does not need it.
    const owner = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath });
    const written = await writeReport({ catalogPath: join(p.lakePath, 'catalog.duckdb'), out, now: new Date('2026-03-01T12:00:02.500Z') }).finally(() => owner.close());
    expect(written.source).toMatchObject({ kind: 'catalog', path: join(p.lakePath, 'catalog.duckdb') });
    const html = await readFile(out, 'utf8');
    expect(html).toMatch(/from the Parquet lake/);
    expect(html).toMatch(/<td data-col="unsubscribes" class="num">12<\/td>/);
    expect(html).toMatch(/<td data-col="duration_s" class="num">2\.5 s<\/td>/);
    expect(html).toMatch(/<td data-col="age" class="num">2\.0 h<\/td>/);
  });
});
