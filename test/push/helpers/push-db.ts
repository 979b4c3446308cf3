import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { queryOver } from '../../../src/warehouse/sql-run.js';
import type { WarehouseQuery } from '../../../src/warehouse/types.js';

const PUSH_SQL = ['sql/030_push_ledger.sql', 'sql/031_push_plan.sql', 'sql/views/push_dead_letters.sql'];

/** A DuckDB file in a temp dir with the push tables, for the length of `fn`. */
export async function withPushDb<T>(fn: (db: WarehouseQuery, dbPath: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-push-'));
  const dbPath = join(dir, 'crm.duckdb');
  try {
    const instance = await DuckDBInstance.create(dbPath);
    try {
      const connection = await instance.connect();
      try {
        for (const file of PUSH_SQL) await connection.run(await readFile(file, 'utf8'));
        return await fn(queryOver(connection), dbPath);
      } finally {
        connection.closeSync();
      }
    } finally {
      instance.closeSync();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
