import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Finds the project's `sql/` folder by walking up from this module, so it works from `src/`
 * (tsx) and from `dist/src/` (built) alike.
 */
export function findSqlDir(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    const candidate = join(dir, 'sql');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No sql/ folder found above ${from}; pass sqlDir explicitly.`);
    dir = parent;
  }
}
