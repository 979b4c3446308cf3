import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeContact } from '../warehouse/contact-factory.js';
import { ctx, tempPaths, writeScope } from '../warehouse/temp-warehouse.js';
import { runCli } from './run-cli.js';

// Issue 16, problem 3: `crmsync query "copy (select 1) to '<the warehouse file>'"` exited 0 and
// replaced the DuckDB file with 4 bytes. Every statement that could write is refused before it
// is bound; reads of the warehouse, the lake and plain files still work.
let p: ReturnType<typeof tempPaths>;
let env: Record<string, string>;
let original: Buffer;
let catalog: string;
let originalCatalog: Buffer;

beforeAll(async () => {
  p = tempPaths();
  await writeScope(p, async (w) => {
    await w.loadContacts(
      Array.from({ length: 12 }, (_, i) => makeContact(i + 1)),
      ctx(),
    );
    await w.publishLake();
  });
  original = readFileSync(p.dbPath);
  catalog = join(p.lakePath, 'catalog.duckdb');
  originalCatalog = readFileSync(catalog);
  env = { CRMSYNC_DB: p.dbPath, CRMSYNC_LAKE: p.lakePath, CRMSYNC_DATA_DIR: join(p.dir, 'state') };
});
afterAll(() => p?.cleanup());

describe('crmsync query is read-only', () => {
  it('refuses COPY TO, EXPORT, ATTACH, INSTALL, SET and a write hidden after a SELECT, and writes nothing', { timeout: 120_000 }, async () => {
    const db = p.dbPath;
    const attempts = [
      `copy (select 1) to '${db}' (format csv)`,
      `copy (select 1) to '${catalog}' (format csv)`,
      `attach '${catalog}' as cat_rw (read_write)`,
      `COPY contacts TO '${join(p.dir, 'out.parquet')}' (FORMAT parquet)`,
      `export database '${join(p.dir, 'exported')}'`,
      `attach '${join(p.dir, 'other.duckdb')}' as other`,
      'install httpfs',
      "set temp_directory = '/tmp/elsewhere'",
      `select 1; copy (select 2) to '${join(p.dir, 'second.csv')}'`,
      "pragma profile_output = '/tmp/crmsync-profile.json'",
    ];
    const before = readdirSync(p.dir).sort();
    const results = await Promise.all(attempts.map((sql) => runCli(['query', sql], env)));
    for (const [i, r] of results.entries()) {
      expect(r.code, `${attempts[i]}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(/runs only SELECT statements.*\[QUERY_NOT_READ_ONLY\]/);
    }
    expect(readFileSync(db).equals(original)).toBe(true);
    expect(readFileSync(catalog).equals(originalCatalog)).toBe(true);
    expect(readdirSync(p.dir).sort()).toEqual(before);
  });

  it('still reads the catalog, the Parquet lake and plain files', { timeout: 120_000 }, async () => {
    const fromFile = await runCli(['query', '-f', 'json', 'SELECT count(*) AS n FROM contacts'], env);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toEqual([{ n: 12 }]);

    const lakeGlob = join(p.lakePath, 'contacts', '**', '*.parquet');
    const direct = await runCli(['query', '-f', 'json', `SELECT count(*) AS n FROM read_parquet('${lakeGlob}', hive_partitioning = true)`], env);
    expect(direct.code, direct.stderr).toBe(0);
    expect(JSON.parse(direct.stdout)).toEqual([{ n: 12 }]);

    const show = await runCli(['query', '-f', 'csv', 'SHOW TABLES'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^contacts$/m);

    // It never needs the warehouse file: without one, the query reads the catalog all the same.
    const lakeOnly = { ...env, CRMSYNC_DB: join(p.dir, 'missing.duckdb') };
    const lake = await runCli(['query', '-f', 'json', 'SELECT count(*) AS n FROM contacts'], lakeOnly);
    expect(lake.code, lake.stderr).toBe(0);
    expect(JSON.parse(lake.stdout)).toEqual([{ n: 12 }]);
    expect(existsSync(join(p.dir, 'missing.duckdb'))).toBe(false);
    rmSync(join(p.dir, 'state'), { recursive: true, force: true });
  });

  it('an answer cut at --max-rows says so on stderr, with -q too (it hides only what was read)', { timeout: 120_000 }, async () => {
    const [loud, quiet, whole] = await Promise.all([
      runCli(['query', '-f', 'csv', '-n', '5', 'SELECT id FROM contacts ORDER BY id'], env),
      runCli(['query', '-q', '-f', 'csv', '-n', '5', 'SELECT id FROM contacts ORDER BY id'], env),
      runCli(['query', '-q', '-f', 'csv', '-n', '12', 'SELECT id FROM contacts ORDER BY id'], env),
    ]);
    for (const r of [loud, quiet]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n')).toEqual(['id', '1', '2', '3', '4', '5']);
      expect(r.stderr).toContain('stopped after 5 rows (raise --max-rows for more)');
    }
    expect(loud.stderr).toMatch(/catalog/);
    expect(quiet.stderr).not.toMatch(/catalog/);
    expect(whole.stdout.trim().split('\n')).toHaveLength(13);
    expect(whole.stderr).toBe('');
  });

  it('before anything was published: reads files named in the query, and names the fix for tables', { timeout: 120_000 }, async () => {
    const unpublished = { ...env, CRMSYNC_LAKE: join(p.dir, 'no-lake') };
    const csv = join(p.dir, 'people.csv');
    writeFileSync(csv, 'email\na@example.test\nb@example.test\n');
    const [file, table] = await Promise.all([
      runCli(['query', '-f', 'json', `SELECT count(*) AS n FROM read_csv('${csv}')`], unpublished),
      runCli(['query', 'SELECT count(*) FROM contacts'], unpublished),
    ]);
    expect(file.code, file.stderr).toBe(0);
    expect(JSON.parse(file.stdout)).toEqual([{ n: 2 }]);
    expect(file.stderr).toMatch(/no catalog at .*no-lake\/catalog\.duckdb yet \(run `crmsync sync` first\)/);
    expect(table.code).toBe(1);
    expect(table.stderr).toMatch(/No catalog at .*run `crmsync sync` first.*\[CATALOG_NOT_FOUND\]/);
    expect(existsSync(join(p.dir, 'no-lake'))).toBe(false);
    rmSync(csv);
  });
});
