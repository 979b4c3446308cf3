import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

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

describe("DuckDB's allocator in a crmsync process", () => {
  it('runs on the defaults: the entry sets them before DuckDB loads', { timeout: 120_000 }, async () => {
    // DuckDB's own build has two arenas on this machine; crmsync's default is one.
    expect(await arenasInCli('stats_print:true')).toBe('1');
    // What the user sets wins.
    expect(await arenasInCli('narenas:2,stats_print:true')).toBe('2');
  });
});
