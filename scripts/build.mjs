#!/usr/bin/env node
// `npm run build` (and `npm install`, through `prepare`): compiles to dist/, then stamps dist/ with
// the hash of the sources compiled, which bin/crmsync.js checks before running dist/. The hash is
// taken before compiling: a source edited mid-build leaves dist/ stale, never wrongly current.
//   --if-possible  skip quietly when there is nothing to compile with (an install without dev
//                  dependencies, or the image's install before the sources are copied)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash, stampContent, stampPath } from '../bin/build-stamp.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ifPossible = process.argv.includes('--if-possible');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  tsc = undefined;
}
if (ifPossible && (!tsc || !existsSync(join(root, 'src', 'cli', 'entry.ts')))) process.exit(0);
if (!tsc) {
  console.error('crmsync build: typescript is not installed; run `npm install` (with dev dependencies) first');
  process.exit(1);
}

const hash = sourceHash(root);
// A failed build must not leave an earlier stamp claiming the half-written output is current.
rmSync(stampPath(root), { force: true });
const built = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
mkdirSync(dirname(stampPath(root)), { recursive: true });
writeFileSync(stampPath(root), stampContent(hash));
