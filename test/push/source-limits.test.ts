import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePushOptions } from '../../src/cli/push.js';
import { PushSourceError } from '../../src/push/push-errors.js';
import { DEFAULT_MAX_SOURCE_ROW_BYTES, readSourceRows } from '../../src/push/read-source-rows.js';
import { MAX_SOURCE_FILE_BYTES, parseSourceSpec } from '../../src/push/source-spec.js';
import { withPushDb } from './helpers/push-db.js';

/**
 * What the push reads has limits: the size of a file `--from` names, and the JSON text of the
 * rows of any source, one by one and in all (DuckDB reads the source; a row or a source past a
 * limit never reaches JavaScript). Rows are counted too (500,000; push-plan-send.test.ts).
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-push-limits-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<Error> {
  return (await p.then(
    () => new Error('the source was read'),
    (e: unknown) => e,
  )) as Error;
}

describe('push source limits', () => {
  it('refuses a file over 1 GiB before reading it, and takes one of exactly 1 GiB', async () => {
    // Sparse files: their size is what the check sees, and nothing is written to the disk.
    const over = join(dir, 'huge.csv');
    await writeFile(over, 'email,status\n');
    await truncate(over, MAX_SOURCE_FILE_BYTES + 1);
    expect(() => parseSourceSpec(over)).toThrow(PushSourceError);
    expect(() => parseSourceSpec(over)).toThrow(/of 1073741825 bytes \(limit 1073741824, 1 GiB\); split it/);
    expect(() => parsePushOptions({ from: over })).toThrow(/limit 1073741824/);
    const exact = join(dir, 'exact.csv');
    await writeFile(exact, 'email,status\n');
    await truncate(exact, MAX_SOURCE_FILE_BYTES);
    expect(parseSourceSpec(exact)).toMatchObject({ kind: 'file', format: 'csv', path: exact });
  });

  it('refuses a source with one row longer than the row limit, from a table or a file, naming the row', async () => {
    const file = join(dir, 'wide.csv');
    const blob = 'b'.repeat(DEFAULT_MAX_SOURCE_ROW_BYTES);
    await writeFile(file, `email,status,notes\nann@example.test,subscribed,short\nbo@example.test,subscribed,${blob}\n`);
    await withPushDb(async (db) => {
      await db.query(`CREATE TABLE wide AS SELECT * FROM read_csv('${file}')`);
      for (const from of ['wide', file, 'SELECT * FROM wide']) {
        const e = await refusal(readSourceRows(db, parseSourceSpec(from)));
        expect(e, from).toBeInstanceOf(PushSourceError);
        expect(e.message).toMatch(/has a row of \d+ bytes \(row 2; limit 262144 a row\); a contact needs far less/);
      }
      // Under the limit the same row is read whole.
      await db.query(`CREATE TABLE under AS SELECT email, status, left(notes, ${DEFAULT_MAX_SOURCE_ROW_BYTES - 1000}) AS notes FROM wide`);
      const rows = await readSourceRows(db, parseSourceSpec('under'));
      expect(rows.map((r) => [r.rowNumber, (r.data.notes as string).length])).toEqual([
        [1, 5],
        [2, DEFAULT_MAX_SOURCE_ROW_BYTES - 1000],
      ]);
    });
  });

  it('refuses a source whose rows add up past the limit, and reads it under a larger one', async () => {
    await withPushDb(async (db) => {
      await db.query(`CREATE TABLE many AS SELECT 'p' || i || '@example.test' AS email, 'subscribed' AS status FROM range(100) r(i)`);
      const spec = parseSourceSpec('many');
      const e = await refusal(readSourceRows(db, spec, { maxBytes: 2_000 }));
      expect(e).toBeInstanceOf(PushSourceError);
      expect(e.message).toMatch(/The push source "many" is \d{4} bytes as rows \(limit 2000\); push it in parts/);
      expect(await readSourceRows(db, spec, { maxBytes: 20_000 })).toHaveLength(100);
      const tooMany = await refusal(readSourceRows(db, spec, { maxRows: 99 }));
      expect(tooMany.message).toMatch(/more than 99 rows/);
    });
  });

  it("keeps the source's order however many threads DuckDB reads it with", async () => {
    await withPushDb(async (db) => {
      await db.query(`SET threads = 4`);
      await db.query(`CREATE TABLE ordered AS SELECT i AS n, 'p' || i || '@example.test' AS email, 'subscribed' AS status FROM range(200000) r(i)`);
      const file = join(dir, 'ordered.csv');
      await db.query(`COPY ordered TO '${file}' (HEADER)`);
      for (const from of ['ordered', file, 'SELECT * FROM ordered WHERE n % 2 = 1']) {
        const rows = await readSourceRows(db, parseSourceSpec(from));
        const step = from.startsWith('SELECT') ? 2 : 1;
        const first = step === 2 ? 1 : 0;
        expect(
          rows.findIndex((r, i) => Number(r.data.n) !== first + i * step),
          from,
        ).toBe(-1);
      }
    });
  });
});
