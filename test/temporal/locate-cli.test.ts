import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locateTemporalCli, temporalCliCacheDir } from '../../src/temporal/locate-cli.js';

// The setup script (plain Node, runs before dependencies are trusted) and the runtime lookup are
// two implementations of one order; these cases pin them together.
function runSetup(env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['scripts/setup-temporal.mjs'], { env, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
}

async function fakeCli(dir: string, version = 'temporal version 1.5.1'): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'temporal');
  await writeFile(path, `#!/bin/sh\necho "${version}"\n`);
  await chmod(path, 0o755);
  return path;
}

describe('Temporal CLI lookup (runtime and setup script agree)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'crmsync-locate-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('prefers TEMPORAL_CLI_PATH over the cache and PATH', async () => {
    const explicit = await fakeCli(join(root, 'explicit'));
    const cacheRoot = join(root, 'cache');
    await fakeCli(temporalCliCacheDir(cacheRoot));
    const binDir = join(root, 'bin');
    await fakeCli(binDir);
    expect(locateTemporalCli({ cliPath: explicit, cacheRoot, searchPath: binDir }).path).toBe(explicit);
    expect(runSetup({ TEMPORAL_CLI_PATH: explicit, XDG_CACHE_HOME: cacheRoot, PATH: binDir }).stdout).toBe(explicit);
  });

  it('uses the cache before PATH', async () => {
    const cacheRoot = join(root, 'cache');
    const cached = await fakeCli(temporalCliCacheDir(cacheRoot));
    const binDir = join(root, 'bin');
    await fakeCli(binDir);
    expect(locateTemporalCli({ cacheRoot, searchPath: binDir })).toEqual({ path: cached, source: 'cache' });
    expect(runSetup({ XDG_CACHE_HOME: cacheRoot, PATH: binDir }).stdout).toBe(cached);
  });

  it('falls back to PATH, noting a version other than 1.5.1', async () => {
    const cacheRoot = join(root, 'empty-cache');
    const binDir = join(root, 'bin');
    const onPath = await fakeCli(binDir, 'temporal version 1.9.0');
    expect(locateTemporalCli({ cacheRoot, searchPath: binDir })).toEqual({ path: onPath, source: 'PATH' });
    const setup = runSetup({ XDG_CACHE_HOME: cacheRoot, PATH: binDir });
    expect(setup.stdout).toBe(onPath);
    expect(setup.stderr).toMatch(/tested with v1\.5\.1/);
  });

  it('with nothing found and no Go, both name what to install', async () => {
    const cacheRoot = join(root, 'empty-cache');
    const emptyBin = join(root, 'nothing');
    await mkdir(emptyBin);
    expect(() => locateTemporalCli({ cacheRoot, searchPath: emptyBin })).toThrow(/npm run setup/);
    const setup = runSetup({ XDG_CACHE_HOME: cacheRoot, PATH: emptyBin });
    expect(setup.status).toBe(1);
    expect(setup.stderr).toMatch(/Install Go/);
  });

  it('refuses to build with a Go older than the CLI needs, before downloading anything', async () => {
    const binDir = join(root, 'old-go');
    await mkdir(binDir);
    await writeFile(join(binDir, 'go'), '#!/bin/sh\necho "go version go1.22.3 linux/amd64"\n');
    await chmod(join(binDir, 'go'), 0o755);
    const setup = runSetup({ XDG_CACHE_HOME: join(root, 'cache'), PATH: binDir });
    expect(setup.status).toBe(1);
    expect(setup.stderr).toMatch(/go1\.22\.3 .*is too old: .* needs Go 1\.25/);
  });

  it('rejects a TEMPORAL_CLI_PATH that is not executable', () => {
    const missing = join(root, 'no-such-temporal');
    expect(() => locateTemporalCli({ cliPath: missing })).toThrow(/TEMPORAL_CLI_PATH/);
    expect(runSetup({ TEMPORAL_CLI_PATH: missing, XDG_CACHE_HOME: root, PATH: '' }).status).toBe(1);
  });
});
