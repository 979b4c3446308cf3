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
  dir = await mkdtemp(join(tmpdir(), 'crmsync-push-syntax-'));
  w = await openWarehouse({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  await w.query(`CREATE TABLE people AS SELECT * FROM (VALUES ('ann@example.test', 'subscribed'), ('bo@example.test', 'pending')) AS t(email, status)`);
});
afterAll(async () => {
  await w?.close();
  await rm(dir, { recursive: true, force: true });
});

async function refusal(from: string): Promise<Error> {
  return await readSourceRows(w, parseSourceSpec(from)).then(
    () => new Error('the source was read'),
    (e: unknown) => e as Error,
  );
}

// A syntax error in a `--from` query was reported inside crmsync's wrapper, `SELECT * FROM
// (<query>) AS _push_source`: an unfinished query read as `syntax error at or near ")"`, a
// bracket the user never wrote.
describe('a push query that does not parse', () => {
  it("is reported as DuckDB parses the user's query alone, with where in it", async () => {
    const e = await refusal('SELECT email, status FROM people WHERE status =');
    expect(e).toBeInstanceOf(PushSourceError);
    expect(e.message).toBe(
      'The push query does not parse: syntax error at end of input (line 1, column 48: SELECT email, status FROM people WHERE status =). Fix the query in --from (`crmsync query` runs it alone, as written).',
    );
    const lines = await refusal("SELECT email,\n  status\nFROM people\nWHERE status IN ('subscribed', 'pending'");
    expect(lines.message).toMatch(/^The push query does not parse: syntax error at end of input \(line 4, column 41: WHERE status IN \('subscribed', 'pending'\)\. Fix the query/);
    // A bracket of the user's own is named where it is.
    const bracket = await refusal("SELECT email, status FROM people WHERE status = 'pending')");
    expect(bracket.message).toMatch(/^The push query does not parse: syntax error at or near "\)" \(line 1, column 58: SELECT .* = 'pending'\)\)\./);
    for (const m of [e.message, lines.message, bracket.message]) expect(m).not.toMatch(/_push_source/);
  });

  it('refuses a query that parses only inside the wrapper', async () => {
    const e = await refusal('SELECT * FROM people) AS a, (SELECT 1 AS extra');
    expect(e.message).toMatch(/^The push query does not parse: syntax error at or near "\)" \(line 1, column 21: SELECT \* FROM people\)\)/);
  });

  it('reads a query ending in a line comment, which used to hide the closing bracket', async () => {
    const rows = await readSourceRows(w, parseSourceSpec('SELECT email, status FROM people -- everyone'));
    expect(rows.map((r) => r.data.email)).toEqual(['ann@example.test', 'bo@example.test']);
  });

  it('reads a query with a semicolon inside a string, a quoted name or a comment, which used to be refused', async () => {
    const rows = await readSourceRows(w, parseSourceSpec(`SELECT email, status || ';x' AS "a;b", $$c;d$$ AS c /* e; */ FROM people WHERE email <> 'x;y' -- f;\nORDER BY email;`));
    expect(rows.map((r) => [r.data.email, r.data['a;b'], r.data.c])).toEqual([
      ['ann@example.test', 'subscribed;x', 'c;d'],
      ['bo@example.test', 'pending;x', 'c;d'],
    ]);
  });

  it('leaves the errors of a query that parses to the read, as before', async () => {
    const e = await refusal('SELECT email FROM nobody');
    expect(e.message).toMatch(/^Cannot read the push source query: Catalog Error: Table with name nobody does not exist!\. Check/);
  });
});
