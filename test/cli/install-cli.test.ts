import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../scripts/install-cli.mjs', import.meta.url));

// Issue 16, problem 5: there was no `crmsync` command after the README's set-up, and `npx
// crmsync` outside the checkout asks the public registry. `npm run install-cli` installs a shim
// that runs this checkout's CLI from any folder.
describe('npm run install-cli', () => {
  it('installs a crmsync command that runs this checkout from any folder', { timeout: 120_000 }, () => {
    const home = mkdtempSync(join(tmpdir(), 'crmsync-home-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'crmsync-elsewhere-'));
    try {
      const env = { PATH: process.env.PATH, HOME: home };
      const install = spawnSync(process.execPath, [script], { env, encoding: 'utf8' });
      expect(install.status, install.stderr).toBe(0);
      const shim = join(home, '.local', 'bin', 'crmsync');
      expect(install.stdout).toContain(`installed ${shim}`);
      expect(install.stdout).toMatch(/is not on your PATH/);
      expect(statSync(shim).mode & 0o111).not.toBe(0);

      // From a folder outside the checkout, with the shim's folder on PATH, as a user runs it.
      const userEnv = { PATH: `${join(home, '.local', 'bin')}:${process.env.PATH}`, HOME: home, CRMSYNC_EMBEDDED_IDLE: '0' };
      const help = spawnSync('crmsync', ['--help'], { cwd: elsewhere, env: userEnv, encoding: 'utf8' });
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/Usage: crmsync/);
      expect(help.stdout).toMatch(/^\s+sync /m);
      const list = spawnSync('crmsync', ['schedule', 'list'], { cwd: elsewhere, env: userEnv, encoding: 'utf8' });
      expect(list.status, list.stderr).toBe(0);
      expect(list.stdout).toBe('no schedules\n');
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
