import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// Issue 16, problem 9: `npm install` on a fresh clone rewrote package-lock.json (218 lines). The
// committed lock lacked the platform binaries other systems need (DuckDB's and swc's optional
// packages for macOS, Windows and other CPUs): it had been written from one machine's pruned
// tree, and npm adds them back on every install. A complete lock lists each of them.
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { version?: string }> };
const require = createRequire(import.meta.url);

describe('package-lock.json', () => {
  it.each(['@duckdb/node-bindings', '@swc/core'])('lists every platform package %s may need, so npm install leaves it as is', (name) => {
    const pkg = require(`${name}/package.json`) as { optionalDependencies?: Record<string, string> };
    const optional = Object.keys(pkg.optionalDependencies ?? {});
    expect(optional.length).toBeGreaterThan(0);
    const missing = optional.filter((dep) => !lock.packages[`node_modules/${dep}`]);
    expect(missing, 'regenerate with `npm install --package-lock-only` in a clean clone').toEqual([]);
  });
});
