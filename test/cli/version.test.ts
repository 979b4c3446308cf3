import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/cli/package-version.js';
import { runCli } from './run-cli.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// A newcomer's `crmsync --version` was an unknown option.
describe('crmsync --version', () => {
  it("prints package.json's version", { timeout: 60_000 }, async () => {
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], {});
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${pkg.version}\n`);
    }
  });

  it('finds the package.json named crmsync from the sources and from the build, at their different depths', () => {
    const root = mkdtempSync(join(tmpdir(), 'crmsync-version-'));
    dirs.push(root);
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'crmsync', version: '7.8.9' }));
    // A package.json of another package on the way up is passed over.
    mkdirSync(join(root, 'dist', 'src', 'cli'), { recursive: true });
    writeFileSync(join(root, 'dist', 'package.json'), JSON.stringify({ type: 'module' }));
    mkdirSync(join(root, 'src', 'cli'), { recursive: true });
    expect(packageVersion(join(root, 'src', 'cli'))).toBe('7.8.9');
    expect(packageVersion(join(root, 'dist', 'src', 'cli'))).toBe('7.8.9');
    expect(packageVersion(tmpdir())).toBeUndefined();
  });
});
