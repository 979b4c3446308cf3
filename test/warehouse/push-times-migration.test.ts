import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/warehouse/index.js';
import { PushLedger } from '../../src/warehouse/push-ledger-store.js';
import { findSqlDir } from '../../src/warehouse/sql-dir.js';
import { tempPaths } from './temp-warehouse.js';

// The push's times were plain TIMESTAMPs of UTC wall times; read in another session zone they
// compared with now() as local times. Migration 110 makes each the instant it meant, and what the
// push writes afterwards is an instant too.
const paths: { cleanup(): void }[] = [];
afterEach(() => paths.splice(0).forEach((p) => p.cleanup()));

const TIMES = `SELECT table_name, column_name, data_type FROM information_schema.columns
  WHERE table_name IN ('_push_ledger', '_push_runs') AND column_name LIKE '%_at' ORDER BY ALL`;

describe('migration 110: the push ledger and runs hold instants', () => {
  it('keeps the instant of every time written before, and new ones read right in any session zone', async () => {
    const p = tempPaths();
    paths.push(p);
    const oldSql = join(p.dir, 'sql-before');
    mkdirSync(oldSql);
    for (const f of readdirSync(findSqlDir())) if (/^\d{3}_.*\.sql$/.test(f) && Number(f.slice(0, 3)) < 110) copyFileSync(join(findSqlDir(), f), join(oldSql, f));
    const before = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, sqlDir: oldSql });
    try {
      await before.migrate();
      await before.query(`INSERT INTO _push_ledger (source, push_key, email, outcome, first_seen_at, last_attempt_at, updated_at)
        VALUES ('s', 'a@example.test', 'a@example.test', 'failed', '2026-06-06 19:00:00', '2026-06-06 19:30:00', '2026-06-06 19:30:00')`);
      await before.query(`INSERT INTO _push_runs (run_id, source, status, started_at, finished_at) VALUES ('r1', 's', 'succeeded', '2026-06-06 19:00:00', NULL)`);
    } finally {
      await before.close();
    }

    const w = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, siteTimeZone: 'UTC' });
    try {
      await w.migrate();
      // Checkpointed at once: a crash now finds no table change of the migration's to replay
      // (DuckDB cannot replay an ALTER ... TYPE ... USING from its log).
      expect(existsSync(`${p.dbPath}.wal`) ? statSync(`${p.dbPath}.wal`).size : 0).toBe(0);
      expect((await w.query(TIMES)).map((r) => r.data_type)).toEqual(Array(6).fill('TIMESTAMP WITH TIME ZONE'));
      await w.query(`SET TimeZone = 'Asia/Tokyo'`);
      expect(
        await w.query(
          `SELECT first_seen_at = TIMESTAMPTZ '2026-06-06 19:00:00+00' AS first, updated_at = TIMESTAMPTZ '2026-06-06 19:30:00+00' AS updated, succeeded_at IS NULL AS never FROM _push_ledger`,
        ),
      ).toEqual([{ first: true, updated: true, never: true }]);
      expect(await w.query(`SELECT started_at = TIMESTAMPTZ '2026-06-06 19:00:00+00' AS started FROM _push_runs`)).toEqual([{ started: true }]);

      // Written now, found by the README's "in the last hour" in a session zone nine hours ahead.
      await new PushLedger(w).recordFailure({
        source: 's',
        key: 'b@example.test',
        email: 'b@example.test',
        fingerprint: 'f',
        runId: 'r2',
        httpStatus: 422,
        code: 'CRM_VALIDATION',
        field: 'email',
        message: 'invalid',
        retryable: false,
        at: new Date(),
      });
      expect(await w.query(`SELECT push_key FROM push_dead_letters WHERE updated_at > now() - INTERVAL 1 HOUR`)).toEqual([{ push_key: 'b@example.test' }]);
    } finally {
      await w.close();
    }
  });
});
