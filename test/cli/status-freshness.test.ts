import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatStatus, statusCommand } from '../../src/cli/status.js';
import { loadConfig } from '../../src/config.js';
import { readLakeManifest, type WarehouseHandle } from '../../src/warehouse/index.js';
import { makeContact } from '../warehouse/contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, type tempPaths } from '../warehouse/temp-warehouse.js';

let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
beforeAll(async () => {
  // Held open for the whole file, as the worker that owns the warehouse file holds it.
  ({ p, w } = await openTempWarehouse());
  await w.loadContacts(
    Array.from({ length: 12 }, (_, i) => makeContact(i + 1)),
    ctx(),
  );
  await w.recordRun({
    runId: 'r1',
    stream: 'contacts',
    mode: 'backfill',
    startedAt: new Date('2026-01-10T00:00:00Z'),
    finishedAt: new Date('2026-01-10T00:01:00Z'),
    status: 'succeeded',
    pages: 1,
    requests: 1,
    inserted: 12,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    error: null,
  });
  await w.publishLake();
});
afterAll(() => closeTempWarehouse({ p, w }));

const config = () => loadConfig({ CRMSYNC_DB: p.dbPath, CRMSYNC_LAKE: p.lakePath, CRMSYNC_DATA_DIR: join(p.dir, 'state') });

describe('crmsync status', () => {
  it("shows each lake table's publish time and age, read from the catalog while the writer holds the file", async () => {
    const manifest = (await readLakeManifest(p.lakePath))!;
    const contactsAt = manifest.tables.contacts!.publishedAt;
    const now = Date.parse(contactsAt) + 90_000;
    const report = await statusCommand(config(), now);
    expect(report.source).toMatch(/^catalog .*catalog\.duckdb of the Parquet lake \(published \d{4}-/);
    expect(report.streams.find((s) => s.stream === 'contacts')).toMatchObject({ rows: 12, lastRun: { status: 'succeeded' } });
    expect(report.lake.find((t) => t.table === 'contacts')).toEqual({ table: 'contacts', publishedAt: contactsAt, rows: 12, ageSeconds: 90 });
    expect(report.lake.map((t) => t.table)).toEqual(expect.arrayContaining(['contacts', 'contact_tags', '_sync_runs']));
    expect(formatStatus(report, now)).toMatch(new RegExp(`^  contacts +12 rows  published ${contactsAt.replace(/\./g, '\\.')} \\(90s ago\\)$`, 'm'));
  });

  it('a later publish moves the table forward, and the age counts from it', async () => {
    const before = (await readLakeManifest(p.lakePath))!.tables.contacts!;
    await w.loadContacts([makeContact(100)], ctx());
    await w.publishLake();
    const after = (await readLakeManifest(p.lakePath))!.tables.contacts!;
    expect(Date.parse(after.publishedAt)).toBeGreaterThanOrEqual(Date.parse(before.publishedAt));
    const report = await statusCommand(config(), Date.parse(after.publishedAt) + 3 * 3_600_000);
    expect(report.lake.find((t) => t.table === 'contacts')).toMatchObject({ publishedAt: after.publishedAt, rows: 13, ageSeconds: 3 * 3_600 });
    expect(formatStatus(report, Date.parse(after.publishedAt) + 3 * 3_600_000)).toMatch(/^ {2}contacts +13 rows {2}published \S+ \(3h ago\)$/m);
  });

  it('before any publish: says how to get a catalog, and still lists the streams', async () => {
    const now = Date.parse('2026-11-20T10:00:00Z');
    const report = await statusCommand(loadConfig({ CRMSYNC_DB: p.dbPath, CRMSYNC_LAKE: join(p.dir, 'no-lake'), CRMSYNC_DATA_DIR: join(p.dir, 'state') }), now);
    expect(report.source).toMatch(/unavailable .*run `crmsync sync` first/);
    expect(report.lake).toEqual([]);
    expect(report.streams.length).toBeGreaterThan(0);
    // No "every contact read never or later": only what is known.
    expect(formatStatus(report, now)).toMatch(/^ +staleness: nothing published yet$/m);
  });
});
