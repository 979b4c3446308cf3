import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { openOwnerFromConfig } from '../../src/worker/open-owner-from-config.js';

describe('the warehouse owner under CRMSYNC_SYNC_MEMORY_LIMIT', () => {
  it('runs under the limit, and running out of it names the setting to raise', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-memlimit-'));
    const owner = await openOwnerFromConfig({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake'), syncMemoryLimit: '16MB' });
    try {
      const limit = await owner.run((w) => w.query(`SELECT current_setting('memory_limit') AS m`));
      expect(String(limit[0]?.m)).toMatch(/^1[56]\.\d+ MiB$/);
      // A list of 20M integers (160 MB) cannot spill: DuckDB runs out of the 16MB.
      const failed = owner.run((w) => w.query('SELECT len(list(range)) AS n FROM range(20000000)'));
      await expect(failed).rejects.toMatchObject({ code: 'SYNC_MEMORY_LIMIT', retryable: true });
      await expect(failed).rejects.toThrow(/CRMSYNC_SYNC_MEMORY_LIMIT=16MB.*raise CRMSYNC_SYNC_MEMORY_LIMIT/);
      // Other errors pass through as they are.
      await expect(owner.run((w) => w.query('SELECT * FROM no_such_table'))).rejects.toThrow(/no_such_table/);
    } finally {
      await owner.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs on CRMSYNC_SYNC_THREADS DuckDB threads when set; readers keep the defaults', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-threads-'));
    try {
      const machine = { memoryBytes: 24e9, cores: 4 };
      const config = loadConfig({ CRMSYNC_DB: join(dir, 'crm.duckdb'), CRMSYNC_LAKE: join(dir, 'lake'), CRMSYNC_SYNC_THREADS: '3' }, machine);
      expect(config.syncThreads).toBe(3);
      const settings = async (c: Parameters<typeof openOwnerFromConfig>[0]) => {
        const owner = await openOwnerFromConfig(c);
        try {
          return await owner.run((w) => w.query(`SELECT current_setting('threads') AS t, current_setting('memory_limit') AS m, current_setting('checkpoint_threshold') AS c`));
        } finally {
          await owner.close();
        }
      };
      const inWrite = await settings(config);
      expect(Number(inWrite[0]?.t)).toBe(3);
      // The default limit on a machine with memory to spare: 128MB.
      expect(String(inWrite[0]?.m)).toMatch(/^122\.\d+ MiB$/);
      // The owner checkpoints itself (owner-checkpoint.test.ts): DuckDB's own threshold is out of reach.
      expect(String(inWrite[0]?.c)).toMatch(/^931\.\d+ GiB$/);
      const defaults = await withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true }, (w) => w.query(`SELECT current_setting('threads') AS t`));
      const unset = await settings({ ...config, syncThreads: undefined });
      expect(Number(unset[0]?.t)).toBe(Number(defaults[0]?.t));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a CRMSYNC_SYNC_THREADS that is not a whole positive number, naming it', () => {
    expect(() => loadConfig({ CRMSYNC_SYNC_THREADS: '0' })).toThrow(/CRMSYNC_SYNC_THREADS must be a positive number/);
    expect(() => loadConfig({ CRMSYNC_SYNC_THREADS: '1.5' })).toThrow(/CRMSYNC_SYNC_THREADS must be a whole number/);
    expect(loadConfig({}, { memoryBytes: 24e9, cores: 4 }).syncThreads).toBe(1);
  });
});
