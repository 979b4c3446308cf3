#!/usr/bin/env node
// The crmsync command. Runs the compiled CLI in dist/ when it was built from the sources as they
// are now (`npm install` builds it; bin/build-stamp.js checks it): node starts it in a fraction of
// the time tsx needs to transpile every module. Otherwise (no build, or sources changed since) it
// runs the TypeScript sources through tsx (a dev dependency), so an edit is never run stale.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distState } from './build-stamp.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const state = distState(root);
if (state === 'current') {
  await import(new URL('../dist/src/cli/entry.js', import.meta.url).href);
} else {
  // Only a person at a terminal is told; scripts and logs get the command's own output alone.
  if (state === 'stale' && process.stderr.isTTY) process.stderr.write('crmsync: the sources changed since dist/ was built; running them from source (`npm run build` starts faster)\n');
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write(`crmsync: dist/ is ${state} and tsx is not installed to run the sources; run \`npm install\` (it builds dist/) or \`npm run build\`\n`);
    process.exit(70);
  }
  register();
  await import(new URL('../src/cli/entry.ts', import.meta.url).href);
}
