import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openOwnerFromConfig } from '../../src/worker/open-owner-from-config.js';
import { CatalogNotFoundError, withCatalog, writeLakeCatalog, type WarehouseHandle } from '../../src/warehouse/index.js';
import { CATALOG_FILE } from '../../src/warehouse/lake-layout.js';
import { listViewFiles } from '../../src/warehouse/migrate.js';
import { findSqlDir } from '../../src/warehouse/sql-dir.js';
import { makeContact } from './contact-factory.js';
import { closeTempWarehouse, ctx, openTempWarehouse, tempPaths } from './temp-warehouse.js';

// DESIGN.md: readers open a small catalog DuckDB file of views over the published lake,
// read-only, at any time. The writer (`w`) holds the warehouse file for the whole file, as the
// one worker that owns it does.
let p: ReturnType<typeof tempPaths>;
let w: WarehouseHandle;
let catalog: string;
beforeAll(async () => {
  ({ p, w } = await openTempWarehouse());
  catalog = join(p.lakePath, CATALOG_FILE);
  await w.loadContacts(
    Array.from({ length: 30 }, (_, i) => makeContact(i + 1)),
    ctx(new Date('2026-01-10T00:00:00Z')),
  );
  await w.loadEntities(
    'tags',
    Array.from({ length: 30 }, (_, i) => ({
      id: i + 1,
      title: `Tag ${i + 1}`,
      slug: `tag-${i + 1}`,
      description: null,
      total_count: 1,
      subscribers_count: 1,
      created_at: null,
      updated_at: null,
      raw: {},
    })),
    ctx(),
    { complete: true },
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
    inserted: 30,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    error: null,
  });
  await w.publishLake();
});
afterAll(() => closeTempWarehouse({ p, w }));

/** A plain DuckDB client, as an analyst's `duckdb -readonly <catalog>` is. */
async function openPlain(path: string): Promise<{ c: DuckDBConnection; close(): void }> {
  const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  const c = await instance.connect();
  return { c, close: () => (c.closeSync(), instance.closeSync()) };
}

async function one(c: DuckDBConnection, sql: string): Promise<unknown> {
  return (await c.runAndReadAll(sql)).getRows()[0]?.[0];
}

/** Every view and macro sql/views/ defines, by name. */
function analystObjects(): { name: string; kind: 'VIEW' | 'MACRO'; file: string }[] {
  return listViewFiles(findSqlDir(), 'UTC').flatMap((f) =>
    [...f.sql.matchAll(/CREATE\s+OR\s+REPLACE\s+(VIEW|MACRO)\s+(\w+)/gi)].map((m) => ({ name: m[2]!, kind: m[1]!.toUpperCase() as 'VIEW' | 'MACRO', file: f.name })),
  );
}

describe('the catalog', () => {
  it('holds every analyst view and macro of sql/views/, answering as the warehouse does', async () => {
    const objects = analystObjects();
    expect(objects.map((o) => o.name)).toEqual(expect.arrayContaining(['contacts_current', 'contacts_as_of', 'tag_list_member_counts', 'sync_run_health', 'webhook_dead_letters_open']));
    const r = await openPlain(catalog);
    try {
      for (const o of objects) {
        if (o.kind === 'MACRO') {
          expect(Number(await one(r.c, `SELECT count(*) FROM duckdb_functions() WHERE function_name = '${o.name}'`)), `${o.file}: ${o.name}`).toBe(1);
          continue;
        }
        // Each view runs over the lake and gives the rows the warehouse's own view gives.
        const here = (await r.c.runAndReadAll(`SELECT count(*), hash(list(x ORDER BY x::VARCHAR)) FROM ${o.name} x`)).getRows()[0];
        const there = (await w.connection.runAndReadAll(`SELECT count(*), hash(list(x ORDER BY x::VARCHAR)) FROM ${o.name} x`)).getRows()[0];
        expect(here, `${o.file}: ${o.name}`).toEqual(there);
      }
      expect(Number(await one(r.c, 'SELECT count(*) FROM contacts_current'))).toBe(30);
      expect(Number(await one(r.c, `SELECT count(*) FROM contacts_as_of(TIMESTAMPTZ '2030-01-01 00:00:00+00')`))).toBe(30);
      expect(Number(await one(r.c, `SELECT count(*) FROM contacts_as_of(TIMESTAMPTZ '2000-01-01 00:00:00+00')`))).toBe(0);
      expect(await one(r.c, `SELECT rows FROM lake_freshness WHERE table_name = 'contacts'`)).toBe(30n);
    } finally {
      r.close();
    }
  });

  it('stays open and current in a plain client across more publishes than generations are kept', async () => {
    const r = await openPlain(catalog);
    try {
      expect(Number(await one(r.c, 'SELECT count(*) FROM contacts_current'))).toBe(30);
      // Each round publishes a new generation of contacts; publishLake keeps 3.
      for (let round = 1; round <= 5; round++) {
        await w.loadContacts([makeContact(1000 + round)], ctx());
        await w.publishLake();
      }
      // The client still holds the catalog it opened (the file was replaced under it five times).
      expect(Number(await one(r.c, 'SELECT count(*) FROM contacts_current'))).toBe(35);
      expect(Number(await one(r.c, `SELECT count(*) FROM contacts_as_of(TIMESTAMPTZ '2030-01-01 00:00:00+00')`))).toBe(35);
    } finally {
      r.close();
    }
  });

  it('is replaced by rename: an open reader keeps its file, a new one gets a whole catalog, no temp file stays', async () => {
    const before = statSync(catalog).ino;
    const held = await openPlain(catalog);
    await w.loadEntities('tags', [{ id: 99, title: 'New', slug: 'new', description: null, total_count: 0, subscribers_count: 0, created_at: null, updated_at: null, raw: {} }], ctx(), {
      complete: false,
    });
    // Readers open the catalog over and over while publishes rewrite it: every open succeeds
    // and finds the views (a catalog written in place would be locked or half-written).
    let opens = 0;
    let publishing = true;
    const publishes = (async () => {
      for (let i = 0; i < 4; i++) {
        await w.loadContacts([makeContact(2000 + i)], ctx());
        await w.publishLake();
        // Written whole each time (publishLake itself skips a rewrite that would change nothing).
        await writeLakeCatalog({ lakePath: p.lakePath, catalogPath: catalog, sqlDir: findSqlDir(), siteTimeZone: 'UTC' });
      }
    })().finally(() => (publishing = false));
    while (publishing || opens === 0) {
      const r = await openPlain(catalog);
      try {
        expect(Number(await one(r.c, `SELECT count(*) FROM duckdb_views() WHERE view_name IN ('contacts', 'contacts_current', 'lake_freshness')`))).toBe(3);
      } finally {
        r.close();
      }
      opens++;
    }
    await publishes;
    try {
      expect(statSync(catalog).ino).not.toBe(before);
      expect(Number(await one(held.c, 'SELECT count(*) FROM tags'))).toBe(31);
    } finally {
      held.close();
    }
    expect(readdirSync(p.lakePath).filter((f) => f.includes('.tmp') || f.endsWith('.wal'))).toEqual([]);
  });

  it('is rewritten by a publish only when it would change: a new table, or a file it did not write', async () => {
    // The test before wrote it directly: the first publish here takes it over.
    await w.publishLake();
    const before = statSync(catalog);
    await w.loadContacts([makeContact(3000)], ctx());
    await w.publishLake();
    expect(statSync(catalog).ino).toBe(before.ino);
    expect(await withCatalog({ catalogPath: catalog }, (r) => r.query('SELECT count(*) AS n FROM contacts WHERE id = 3000'))).toEqual([{ n: 1 }]);

    // Another publisher replaced it (as a second process would): written again at the next publish.
    await writeLakeCatalog({ lakePath: p.lakePath, catalogPath: catalog, sqlDir: findSqlDir(), siteTimeZone: 'UTC' });
    const replaced = statSync(catalog).ino;
    await w.publishLake();
    expect(statSync(catalog).ino).not.toBe(replaced);

    // A table published for the first time gets its view.
    rmSync(join(p.lakePath, 'webhook_events'));
    await w.publishLake(['tags']);
    expect(await withCatalog({ catalogPath: catalog }, (r) => r.query(`SELECT count(*) AS n FROM duckdb_views() WHERE view_name = 'webhook_events'`))).toEqual([{ n: 0 }]);
    await w.publishLake(['webhook_events']);
    expect(await withCatalog({ catalogPath: catalog }, (r) => r.query(`SELECT count(*) AS n FROM duckdb_views() WHERE view_name = 'webhook_events'`))).toEqual([{ n: 1 }]);

    // Deleted by hand: the next publish, even one with nothing to publish, writes it again.
    rmSync(catalog);
    await w.publishLake();
    expect(existsSync(catalog)).toBe(true);
  });

  // Issue 16: every `crmsync sync` is a new process. A publish that changes no view must not
  // rewrite the catalog there either (it was about a third of a no-change sync's publish).
  it('is not rewritten by a publish in a new process when it would not change', async () => {
    await w.publishLake();
    const before = statSync(catalog);
    vi.resetModules();
    const fresh = await import('../../src/warehouse/write-lake-catalog.js');
    expect(await fresh.refreshLakeCatalog({ lakePath: p.lakePath, catalogPath: catalog, sqlDir: findSqlDir(), siteTimeZone: 'UTC' })).toBe(false);
    expect(statSync(catalog).ino).toBe(before.ino);
    // A stamp that names another file (a catalog replaced without one) is not trusted.
    await writeLakeCatalog({ lakePath: p.lakePath, catalogPath: catalog, sqlDir: findSqlDir(), siteTimeZone: 'UTC' });
    expect(await fresh.refreshLakeCatalog({ lakePath: p.lakePath, catalogPath: catalog, sqlDir: findSqlDir(), siteTimeZone: 'UTC' })).toBe(true);
  });

  it('withCatalog reads while the writer holds the warehouse file, refuses writes and never touches the file', async () => {
    const bytes = readFileSync(catalog);
    const rows = await withCatalog({ catalogPath: catalog }, async (r) => {
      expect(r.source).toMatchObject({ kind: 'catalog', path: catalog, publishedAt: expect.stringMatching(/^\d{4}-/) });
      await expect(r.connection.run('CREATE TABLE catalog.main.x (i INTEGER)')).rejects.toThrow(/read-only|READ_ONLY|Cannot execute/i);
      await expect(r.connection.run('DROP VIEW contacts_current')).rejects.toThrow();
      await expect(r.loadContacts([makeContact(5)], ctx())).rejects.toMatchObject({ code: 'WAREHOUSE_READ_ONLY' });
      return r.query('SELECT count(*) AS n FROM contacts_current');
    });
    expect(rows).toEqual([{ n: 40 }]);
    expect(readFileSync(catalog).equals(bytes)).toBe(true);
  });

  it('names the fix when nothing was published yet', async () => {
    const missing = join(p.dir, 'nowhere', CATALOG_FILE);
    const err = await withCatalog({ catalogPath: missing }, async () => 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogNotFoundError);
    expect((err as Error).message).toMatch(/run `crmsync sync` first/);
    expect(existsSync(join(p.dir, 'nowhere'))).toBe(false);
  });

  it('goes where CRMSYNC_CATALOG says when the sync publishes', async () => {
    const q = tempPaths();
    try {
      const config = loadConfig({ CRMSYNC_DB: q.dbPath, CRMSYNC_LAKE: q.lakePath, CRMSYNC_CATALOG: join(q.dir, 'elsewhere', 'analysts.duckdb') });
      const owner = await openOwnerFromConfig(config);
      try {
        await owner.run(async (x) => {
          await x.loadContacts([makeContact(1)], ctx());
          await x.publishLake();
        });
      } finally {
        await owner.close();
      }
      expect(existsSync(join(q.lakePath, CATALOG_FILE))).toBe(false);
      expect(await withCatalog({ catalogPath: config.catalogPath }, (r) => r.query('SELECT count(*) AS n FROM contacts_current'))).toEqual([{ n: 1 }]);
    } finally {
      q.cleanup();
    }
  });
});
