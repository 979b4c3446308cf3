import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_SOURCE_TEXT, parseSourceSpec } from '../../src/push/source-spec.js';
import { pushSourceSelect } from '../../src/warehouse/push-source.js';

describe('parseSourceSpec', () => {
  it('reads a relation name, quoting every part', () => {
    const spec = parseSourceSpec(' marketing.Upserts ');
    expect(spec).toEqual({ kind: 'relation', sourceId: 'marketing.upserts', name: ['marketing', 'Upserts'] });
    expect(pushSourceSelect(spec)).toBe('SELECT * FROM "marketing"."Upserts"');
  });

  it('wraps a query and names its ledger by a hash that ignores whitespace and a trailing semicolon', () => {
    const a = parseSourceSpec('SELECT email, status FROM contacts_to_fix;');
    const b = parseSourceSpec('select  email,\n status FROM contacts_to_fix');
    expect(a.kind).toBe('query');
    // The closing bracket on its own line: a query ending in a `-- comment` does not hide it.
    expect(pushSourceSelect(a)).toBe('SELECT * FROM (\nSELECT email, status FROM contacts_to_fix\n) AS _push_source');
    expect(a.sourceId).toMatch(/^query:[0-9a-f]{16}$/);
    expect(parseSourceSpec('SELECT email, status FROM contacts_to_fix').sourceId).toBe(a.sourceId);
    expect(b.sourceId).not.toBe(a.sourceId); // case is part of the text
    expect(parseSourceSpec('SELECT 1 AS email', 'spring-campaign').sourceId).toBe('spring-campaign');
  });

  it("reads a file with DuckDB's reader for its format, the path as a quoted literal", () => {
    expect(pushSourceSelect({ kind: 'file', format: 'csv', path: "/tmp/o'k.csv" })).toBe("SELECT * FROM read_csv('/tmp/o''k.csv')");
    expect(pushSourceSelect({ kind: 'file', format: 'parquet', path: '/tmp/a.parquet' })).toBe("SELECT * FROM read_parquet('/tmp/a.parquet')");
  });

  it.each([
    ['', /is empty/],
    ['DELETE FROM contacts', /neither a table\/view name, a .csv, .parquet or .json file, nor a query/],
    ['SELECT 1; DROP TABLE contacts', /more than one statement/],
    ["SELECT 'a;b' AS x; DROP TABLE contacts", /more than one statement/],
    ['SELECT 1 /* one; */; SELECT 2', /more than one statement/],
    [`SELECT '${'x'.repeat(MAX_SOURCE_TEXT)}'`, /save the query as a view/],
  ])('rejects %j', (from, message) => {
    expect(() => parseSourceSpec(from)).toThrow(message);
  });

  it.each([
    "SELECT 'a;b' AS email",
    "SELECT 'it''s; fine' AS email",
    'SELECT 1 AS "x;y"',
    'SELECT $$a;b$$ AS email',
    'SELECT $t$a;b$t$ AS email',
    'SELECT 1 AS email -- no; more\n',
    'SELECT 1 /* a; b */ AS email',
    'SELECT 1 AS email;',
  ])('takes %j as one statement', (from) => {
    expect(parseSourceSpec(from).kind).toBe('query');
  });

  it('names the formats it reads when --from is an existing file of another format', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'source-spec-'));
    try {
      const file = join(dir, 'targets.xlsx');
      await writeFile(file, 'not a table');
      expect(() => parseSourceSpec(file)).toThrow(/not a format push reads; save it as \.csv/);
      expect(() => parseSourceSpec(relative(process.cwd(), file))).toThrow(/not a format push reads/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says a spreadsheet --from names is missing, not that DuckDB lacks an extension for table xlsx', () => {
    for (const name of ['nosuch.xlsx', 'reports.Q3.XLS', 'people.ods']) {
      expect(() => parseSourceSpec(name)).toThrow(
        `\`--from\` names the file ${resolve(name)}, which does not exist; push reads .csv, .tsv, .parquet, .json, .jsonl or .ndjson (optionally .gz) files, so save the sheet as one of those and pass its path (a table so named is read with a query that selects from it).`,
      );
    }
    // The way out it names is a query, which still reads a table of that name.
    expect(parseSourceSpec('SELECT * FROM nosuch.xlsx').kind).toBe('query');
    expect(parseSourceSpec('main.contacts')).toMatchObject({ kind: 'relation', name: ['main', 'contacts'] });
  });

  it('rejects a ledger name that could not be a plain label', () => {
    expect(() => parseSourceSpec('upserts', "x'; --")).toThrow(/--ledger-name/);
  });
});
