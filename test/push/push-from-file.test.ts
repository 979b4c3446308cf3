import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { testEnv } from '../helpers/test-env.js';
import { runCli } from '../cli/run-cli.js';

// Issue 16, problem 7: `--from file.csv` was rejected with no hint, the README's example sources
// could not be made with the tools it describes, a dry run with invalid rows exited 0, and an
// empty source or one without `email` said "would send 0".
let sim: RunningSimulator;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ contacts: 5, seed: 16, mode: 'real' });
  dir = mkdtempSync(join(tmpdir(), 'crmsync-push-file-'));
  // The embedded default, as a user runs the README (a server per command: runCli sets no idle time).
  env = { ...testEnv(sim, dir, { CRMSYNC_TASK_QUEUE: `push-file-${randomUUID().slice(0, 8)}`, CRM_ALLOW_INSECURE_HTTP: '1' }) };
  delete env.TEMPORAL_ADDRESS;
  writeFileSync(join(dir, 'marketing_upserts.csv'), 'email,status,first_name\nann@example.test,subscribed,Ann\nbo@example.test,pending,Bo\n');
  writeFileSync(join(dir, 'crm_targets.csv'), 'email,first_name\ncat@example.test,Cat\n');
  writeFileSync(join(dir, 'people.json'), '[{"email":"dee@example.test","status":"subscribed"}]');
  writeFileSync(join(dir, 'empty.csv'), 'email,status\n');
  writeFileSync(join(dir, 'no_email.csv'), 'address,status\neve@example.test,subscribed\n');
  writeFileSync(join(dir, 'invalid.csv'), 'email,status\nnot-an-address,subscribed\nfine@example.test,subscribed\n');
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('crmsync push from files', () => {
  it('runs every push example of the README as written', { timeout: 240_000 }, async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /## Reverse sync\s+```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README has a Reverse sync example block').toBeDefined();
    const lines = block!.split('\n').filter((l) => l.startsWith('crmsync '));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      const args = shellWords(line.replace(/\s+#.*$/, '')).slice(1);
      const r = await runCli(args, env, 120_000, dir);
      expect(r.code, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
      if (args.includes('--dry-run')) expect(r.stdout).toMatch(/push dry run: 2 source rows from file:marketing_upserts\.csv[\s\S]*would send 2/);
    }
    expect(sim.truth().contacts.some((c) => c.email === 'cat@example.test')).toBe(true);
  });

  it('reads Parquet and JSON files too', { timeout: 120_000 }, async () => {
    const parquet = join(dir, 'people.parquet');
    const convert = await runCli(['query', '-f', 'csv', `SELECT count(*) FROM read_json('${join(dir, 'people.json')}')`], env, 60_000, dir);
    expect(convert.code, convert.stderr).toBe(0);
    // No tool of ours writes Parquet (query is read-only): DuckDB's node API makes the file.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`COPY (SELECT 'fay@example.test' AS email, 'subscribed' AS status) TO '${parquet}' (FORMAT parquet)`);
    c.closeSync();
    db.closeSync();
    const [fromJson, fromParquet] = await Promise.all([runCli(['push', '--from', 'people.json', '--dry-run'], env, 120_000, dir), runCli(['push', '--from', parquet, '--dry-run'], env, 120_000, dir)]);
    expect(fromJson.code, fromJson.stderr).toBe(0);
    expect(fromJson.stdout).toMatch(/1 source rows from file:people\.json[\s\S]*would send 1/);
    expect(fromParquet.code, fromParquet.stderr).toBe(0);
    expect(fromParquet.stdout).toMatch(/1 source rows from file:people\.parquet[\s\S]*would send 1/);
  });

  it('names the fix for an empty source, a missing email column, a missing file; a dry run with invalid rows exits 1', { timeout: 120_000 }, async () => {
    const [empty, noEmail, missing, invalid] = await Promise.all([
      runCli(['push', '--from', 'empty.csv', '--dry-run'], env, 120_000, dir),
      runCli(['push', '--from', 'no_email.csv', '--dry-run'], env, 120_000, dir),
      runCli(['push', '--from', 'nowhere.csv', '--dry-run'], env, 120_000, dir),
      runCli(['push', '--from', 'invalid.csv', '--dry-run'], env, 120_000, dir),
    ]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/"file:empty\.csv" has no rows: nothing to push/);
    expect(noEmail.code).toBe(1);
    expect(noEmail.stderr).toMatch(/has no `email` column \(its columns: address, status\)/);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/names the file .*nowhere\.csv, which does not exist/);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/invalid 1/);
    expect(invalid.stderr).toMatch(/1 row\(s\) are invalid/);
  });
});

/** Splits a README command line like a POSIX shell would, for the quoting used there. */
function shellWords(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}
