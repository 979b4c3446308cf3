import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyDuckdbAllocatorDefaults } from '../../src/worker/duckdb-allocator-defaults.js';
import { runCli } from '../cli/run-cli.js';

/** `opt.narenas` as DuckDB's jemalloc took it in a `crmsync query` process (its exit statistics, which `stats_print` asks for). */
async function arenasInCli(conf: string): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-allocator-'));
  try {
    const r = await runCli(['query', '--quiet', 'SELECT 42 AS answer'], { CRMSYNC_DB: join(dir, 'crm.duckdb'), CRMSYNC_LAKE: join(dir, 'lake'), CRMSYNC_DATA_DIR: dir, DUCKDB_JE_MALLOC_CONF: conf });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('42');
    return /opt\.narenas: (\d+)/.exec(r.stderr)?.[1];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("DuckDB's allocator defaults", () => {
  it('reach the allocator of a crmsync process: DuckDB loads after the entry sets them', { timeout: 120_000 }, async () => {
    // DuckDB's own build has two arenas; the default is one.
    expect(await arenasInCli('stats_print:true')).toBe('1');
    // What the user sets wins.
    expect(await arenasInCli('narenas:2,stats_print:true')).toBe('2');
  });

  it("go in front of the user's settings, once", () => {
    const env: NodeJS.ProcessEnv = {};
    applyDuckdbAllocatorDefaults(env);
    expect(env.DUCKDB_JE_MALLOC_CONF).toBe('narenas:1');
    // A background worker inherits its command's environment: nothing is added twice.
    applyDuckdbAllocatorDefaults(env);
    expect(env.DUCKDB_JE_MALLOC_CONF).toBe('narenas:1');
    const user: NodeJS.ProcessEnv = { DUCKDB_JE_MALLOC_CONF: 'dirty_decay_ms:0,muzzy_decay_ms:0' };
    applyDuckdbAllocatorDefaults(user);
    expect(user.DUCKDB_JE_MALLOC_CONF).toBe('narenas:1,dirty_decay_ms:0,muzzy_decay_ms:0');
  });
});
