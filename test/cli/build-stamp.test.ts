import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A checkout in miniature: the real bin/crmsync.js, bin/build-stamp.js and scripts/build.mjs over
 * a one-file CLI that prints where it runs from (dist/ or the sources through tsx) and its version.
 */
function miniCheckout(): { root: string; setVersion: (v: string) => void } {
  const root = mkdtempSync(join(tmpdir(), 'crmsync-build-stamp-'));
  for (const rel of ['bin/crmsync.js', 'bin/build-stamp.js', 'scripts/build.mjs']) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    copyFileSync(join(repo, rel), join(root, rel));
  }
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', outDir: 'dist', rootDir: '.', types: [], skipLibCheck: true } }));
  writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['src'] }));
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  const setVersion = (v: string): void =>
    writeFileSync(join(root, 'src', 'cli', 'entry.ts'), `const from: string = import.meta.url.endsWith('.ts') ? 'source' : 'dist';\nconsole.log(from, '${v}');\n`);
  setVersion('v1');
  return { root, setVersion };
}

function crmsync(root: string): string {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'crmsync.js')], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

function build(root: string): void {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  expect(r.status, r.stdout + r.stderr).toBe(0);
}

// bin/crmsync.js ran dist/ whenever it existed: after an edit or a pull, the old build ran.
describe('bin/crmsync.js and the build stamp', () => {
  it('runs dist/ only while it was built from the sources as they are; a changed source runs from source', { timeout: 180_000 }, () => {
    const { root, setVersion } = miniCheckout();
    const extra = join(root, 'src', 'cli', 'extra.ts');
    const buildConfig = join(root, 'tsconfig.build.json');
    const builtConfig = readFileSync(buildConfig, 'utf8');
    try {
      expect(crmsync(root)).toBe('source v1');
      build(root);
      expect(crmsync(root)).toBe('dist v1');

      setVersion('v2');
      expect(crmsync(root)).toBe('source v2');

      build(root);
      expect(crmsync(root)).toBe('dist v2');
      // Touched (a checkout back and forth) but the same content: the build still holds.
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(root, 'src', 'cli', 'entry.ts'), later, later);
      expect(crmsync(root)).toBe('dist v2');

      // A new source file is a change too, even if nothing imports it yet; gone again, dist/ holds.
      writeFileSync(extra, 'export const x = 1;\n');
      expect(crmsync(root)).toBe('source v2');
      rmSync(extra);
      expect(crmsync(root)).toBe('dist v2');
      // So is a changed compiler setting.
      writeFileSync(buildConfig, JSON.stringify({ extends: './tsconfig.json', include: ['src'], compilerOptions: { removeComments: true } }));
      expect(crmsync(root)).toBe('source v2');
      writeFileSync(buildConfig, builtConfig);
      expect(crmsync(root)).toBe('dist v2');

      // A failed build leaves dist/ unstamped: the sources run, not the half-built output.
      writeFileSync(join(root, 'src', 'cli', 'entry.ts'), 'const n: number = "not a number";\nconsole.log("source", "broken", n);\n');
      const failed = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { encoding: 'utf8' });
      expect(failed.status).not.toBe(0);
      setVersion('v2');
      expect(crmsync(root)).toBe('source v2');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
