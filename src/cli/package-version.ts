import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * crmsync's version, from the first package.json named crmsync above `from` (this module's
 * folder by default). The sources (`src/cli/`, run through tsx) and the build (`dist/src/cli/`)
 * sit at different depths below it, so it is found by walking up rather than by a fixed path.
 * Undefined when there is none (a copy of the modules without their package.json).
 */
export function packageVersion(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = readPackageJson(join(dir, 'package.json'));
    if (pkg?.name === 'crmsync' && typeof pkg.version === 'string') return pkg.version;
    if (dirname(dir) === dir) return undefined;
  }
}

function readPackageJson(file: string): { name?: unknown; version?: unknown } | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as { name?: unknown; version?: unknown }) : undefined;
  } catch {
    // Missing, unreadable or not JSON: not crmsync's, keep walking up.
    return undefined;
  }
}
