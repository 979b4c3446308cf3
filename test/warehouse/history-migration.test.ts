import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTACT_COLUMNS } from '../../src/warehouse/contact-columns.js';
import { openWarehouse } from '../../src/warehouse/index.js';
import { findSqlDir } from '../../src/warehouse/sql-dir.js';
import { makeContact, tagRef } from './contact-factory.js';
import { tempPaths } from './temp-warehouse.js';

// A warehouse made before contacts_history became a view (its migrations up to 095, the open
// versions held in the table) holds the rows history-rows.test.ts pinned; migrating it must leave
// contacts_history (and what reads it) as it was, and later loads must keep writing it.
const FIXTURE = join(import.meta.dirname, 'fixtures', 'history-rows.json');
const HISTORY = 'SELECT * FROM contacts_history ORDER BY id, valid_from, valid_to NULLS LAST';
const COLUMNS = `SELECT column_name, data_type, ordinal_position FROM information_schema.columns WHERE table_name = 'contacts_history' ORDER BY ordinal_position`;

const paths: { cleanup(): void }[] = [];
afterEach(() => paths.splice(0).forEach((p) => p.cleanup()));

interface Step {
  rows: Record<string, unknown>[];
  asOf: unknown;
  counts: unknown;
}

function typedSelect(): string {
  const typed = CONTACT_COLUMNS.map(([name, type]) => {
    if (type === 'BIGINT[]') return name;
    if (type === 'DATE') return `CAST(left(${name}, 10) AS DATE) AS ${name}`;
    return `CAST(${name} AS ${type}) AS ${name}`;
  });
  return [...typed, '_fingerprint', 'CAST(valid_from AS TIMESTAMPTZ) AS valid_from', 'CAST(valid_to AS TIMESTAMPTZ) AS valid_to', '_load_id', 'CAST(_synced_at AS TIMESTAMPTZ) AS _synced_at'].join(
    ', ',
  );
}

function jsonColumns(): string {
  const cols = [
    ...CONTACT_COLUMNS.map(([name, type]) => [name, type === 'BIGINT[]' ? type : 'VARCHAR']),
    ...['_fingerprint', 'valid_from', 'valid_to', '_load_id', '_synced_at'].map((c) => [c, 'VARCHAR']),
  ];
  return `{${cols.map(([n, t]) => `${n}: '${t}'`).join(', ')}}`;
}

describe('migration 100: contacts_history as a view', () => {
  it('keeps every row of a warehouse made by the table-held history, and later loads version it', async () => {
    const p = tempPaths();
    paths.push(p);
    const steps = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Step[];
    const last = steps[steps.length - 1]!;
    const oldSql = join(p.dir, 'sql-before');
    mkdirSync(oldSql);
    for (const f of readdirSync(findSqlDir())) if (/^\d{3}_.*\.sql$/.test(f) && Number(f.slice(0, 3)) < 100) copyFileSync(join(findSqlDir(), f), join(oldSql, f));
    const rowsFile = join(p.dir, 'rows.json');
    writeFileSync(rowsFile, JSON.stringify(last.rows));

    const before = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, sqlDir: oldSql });
    let columns: unknown;
    try {
      await before.migrate();
      await before.query(`INSERT INTO contacts_history SELECT ${typedSelect()} FROM read_json('${rowsFile}', columns = ${jsonColumns()})`);
      // contacts as the old code left them: a live contact's row is its open version, a deleted
      // one's its last version with the tombstone's load and time.
      const fields = CONTACT_COLUMNS.map(([n]) => n).join(', ');
      await before.query(`INSERT INTO contacts (${fields}, raw, _fingerprint, _load_id, _synced_at, _deleted_at)
        SELECT ${fields}, '{}'::JSON, _fingerprint, CASE WHEN valid_to IS NULL THEN _load_id ELSE 'tombstone' END,
          CASE WHEN valid_to IS NULL THEN _synced_at ELSE valid_to END, valid_to
        FROM contacts_history QUALIFY row_number() OVER (PARTITION BY id ORDER BY valid_from DESC, valid_to DESC NULLS FIRST) = 1`);
      for (const day of [2, 4, 7]) {
        await before.query(`INSERT INTO _sync_runs (run_id, stream, mode, status, started_at, finished_at)
          VALUES ('r${day}', 'contacts', 'full', 'succeeded', TIMESTAMPTZ '2026-06-0${day} 12:30:00+00', TIMESTAMPTZ '2026-06-0${day} 12:30:00+00')`);
      }
      expect(JSON.parse(JSON.stringify(await before.query(HISTORY)))).toEqual(last.rows);
      // A live contact whose row is not its open version (no crmsync wrote one): the version stays in the table.
      await before.query(`UPDATE contacts SET _load_id = 'elsewhere' WHERE id = 1`);
      columns = await before.query(COLUMNS);
    } finally {
      await before.close();
    }

    const w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, siteTimeZone: 'UTC' });
    try {
      await w.migrate();
      expect(await w.query('SELECT name FROM _migrations WHERE version = 100')).toEqual([{ name: '100_contacts_history_view.sql' }]);
      expect(await w.query(`SELECT table_type FROM information_schema.tables WHERE table_name = 'contacts_history'`)).toEqual([{ table_type: 'VIEW' }]);
      expect(await w.query(COLUMNS)).toEqual(columns);
      expect(await w.query('SELECT count(*)::INT AS n FROM _contacts_history_closed WHERE valid_to IS NULL')).toEqual([{ n: 1 }]);
      const live = await w.query('SELECT count(*)::INT - 1 AS n FROM contacts WHERE _deleted_at IS NULL');
      expect(await w.query('SELECT count(*)::INT AS n FROM contacts WHERE _valid_from IS NOT NULL')).toEqual(live);
      expect(JSON.parse(JSON.stringify(await w.query(HISTORY)))).toEqual(last.rows);
      expect(JSON.parse(JSON.stringify(await w.query(`SELECT id, first_name, tag_ids FROM contacts_as_of(TIMESTAMPTZ '2026-06-05 00:00:00+00') ORDER BY id`)))).toEqual(last.asOf);
      expect(JSON.parse(JSON.stringify(await w.query('SELECT kind, id, members, previous_members FROM tag_list_member_counts ORDER BY ALL')))).toEqual(last.counts);

      // A change, a tombstone and a comeback on the migrated warehouse.
      const ctx = (loadId: string, iso: string) => ({ loadId, syncedAt: new Date(iso) });
      expect((await w.loadContacts([makeContact(4, { tags: [tagRef(8)] })], ctx('M1', '2026-06-08T12:00:00Z'))).updated).toBe(1);
      expect(await w.tombstoneContacts([5], { ...ctx('M2', '2026-06-09T12:00:00Z'), deletedAt: new Date('2026-06-09T01:00:00Z') })).toBe(1);
      expect((await w.loadContacts([makeContact(8)], ctx('M3', '2026-06-10T12:00:00Z'))).updated).toBe(1);
      const versions = await w.query(
        `SELECT id, tag_ids, valid_from, valid_to, _load_id FROM contacts_history WHERE id IN (4, 5, 8) AND valid_from >= TIMESTAMPTZ '2026-06-03 00:00:00+00' OR id IN (5, 8) ORDER BY id, valid_from`,
      );
      expect(JSON.parse(JSON.stringify(versions))).toEqual([
        { id: 4, tag_ids: [7], valid_from: '2026-06-03T12:00:00.000Z', valid_to: '2026-06-08T12:00:00.000Z', _load_id: 'L5' },
        { id: 4, tag_ids: [8], valid_from: '2026-06-08T12:00:00.000Z', valid_to: null, _load_id: 'M1' },
        {
          id: 5,
          tag_ids: makeContact(5)
            .tags.map((t) => t.id)
            .sort((a, b) => a - b),
          valid_from: makeContact(5).updated_at,
          valid_to: '2026-06-09T01:00:00.000Z',
          _load_id: 'L1',
        },
        {
          id: 8,
          tag_ids: makeContact(8)
            .tags.map((t) => t.id)
            .sort((a, b) => a - b),
          valid_from: makeContact(8).updated_at,
          valid_to: makeContact(8).updated_at,
          _load_id: 'L1',
        },
        {
          id: 8,
          tag_ids: makeContact(8)
            .tags.map((t) => t.id)
            .sort((a, b) => a - b),
          valid_from: '2026-06-10T12:00:00.000Z',
          valid_to: null,
          _load_id: 'M3',
        },
      ]);
    } finally {
      await w.close();
    }
  });
});
