#!/usr/bin/env node
// The crmsync command. Runs the compiled CLI when `npm run build` has produced it; in a source
// checkout without a build it runs the TypeScript sources through tsx (a dev dependency).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli/entry.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/entry.ts', import.meta.url).href);
}
