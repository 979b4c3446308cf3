import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { warehouseOpener } from '../../src/sync/sync-runtime.js';

describe('write scopes under CRMSYNC_SYNC_MEMORY_LIMIT', () => {
  it('run under the limit, and running out of it names the setting to raise', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-memlimit-'));
    try {
      const open = warehouseOpener({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), syncMemoryLimit: '16MB' });
      const limit = await open(true, (w) => w.query(`SELECT current_setting('memory_limit') AS m`));
      expect(String(limit[0]?.m)).toMatch(/^1[56]\.\d+ MiB$/);
      // A list of 20M integers (160 MB) cannot spill: DuckDB runs out of the 16MB.
      const failed = open(true, (w) => w.query('SELECT len(list(range)) AS n FROM range(20000000)'));
      await expect(failed).rejects.toMatchObject({ code: 'SYNC_MEMORY_LIMIT', retryable: true });
      await expect(failed).rejects.toThrow(/CRMSYNC_SYNC_MEMORY_LIMIT=16MB.*raise CRMSYNC_SYNC_MEMORY_LIMIT/);
      // Other errors pass through as they are.
      await expect(open(true, (w) => w.query('SELECT * FROM no_such_table'))).rejects.toThrow(/no_such_table/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
