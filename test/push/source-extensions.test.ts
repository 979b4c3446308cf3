import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushSourceError } from '../../src/push/push-errors.js';
import { readSourceRows } from '../../src/push/read-source-rows.js';
import { parseSourceSpec } from '../../src/push/source-spec.js';
import { openWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';

let dir: string;
let w: WarehouseHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-push-ext-'));
  // The warehouse as the push's planning activity opens it (a writer; its DuckDB downloads nothing).
  w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
});
afterAll(async () => {
  await w?.close();
  await rm(dir, { recursive: true, force: true });
});

// A query reading a spreadsheet made DuckDB fetch its excel extension, then fail with "Extension
// Autoloading Error" and no fix named. (`--from nosuch.xlsx`, a missing file, did too: it is now
// refused before any read, source-spec.test.ts.)
describe('a push source DuckDB would need an extension for', () => {
  it.each([
    ["SELECT * FROM read_xlsx('people.xlsx')", 'query'],
    ["SELECT * FROM 'people.xlsx'", 'query'],
  ])('%s: names the formats push reads', async (from, named) => {
    const e = await readSourceRows(w, parseSourceSpec(from)).then(
      () => new Error('the source was read'),
      (err: unknown) => err as Error,
    );
    expect(e).toBeInstanceOf(PushSourceError);
    expect(e.message).toBe(
      `Cannot read the push source ${named}: DuckDB would need its excel extension for it, and crmsync installs none. Push reads tables and views, queries over them, and .csv, .tsv, .parquet, .json, .jsonl or .ndjson (optionally .gz) files: save the data as one of those (or load it into a table) and pass that.`,
    );
  });
});
