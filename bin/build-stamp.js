// Whether dist/ was compiled from the sources as they are now. `npm run build` (scripts/build.mjs)
// writes a hash of the sources it compiled to dist/build-stamp.json; bin/crmsync.js runs dist/
// only when the sources still hash the same, so an edited, pulled or checked-out source is never
// run stale. A content hash rather than modification times: a checkout or `touch` that leaves the
// content as built keeps dist/ in use, and a copy that keeps old times cannot hide an edit.
// Plain JavaScript, in bin/, because it runs before anything is compiled and ships in the image.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What tsconfig.build.json compiles, and the settings that shape the output. */
const SOURCE_DIRS = ['src', 'workflows', 'activities'];
const SOURCE_FILES = ['tsconfig.json', 'tsconfig.build.json'];
const STAMP_FILE = join('dist', 'build-stamp.json');

/** A hash of every source file's path and content under `root`. */
export function sourceHash(root) {
  const hash = createHash('sha256');
  const add = (rel) =>
    hash
      .update(rel)
      .update('\0')
      .update(readFileSync(join(root, rel)))
      .update('\0');
  for (const dir of SOURCE_DIRS) {
    if (!existsSync(join(root, dir))) continue;
    const names = readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
      .sort();
    for (const rel of names) add(rel);
  }
  for (const rel of SOURCE_FILES) if (existsSync(join(root, rel))) add(rel);
  return hash.digest('hex');
}

/** Records that dist/ holds the compilation of sources that hashed to `hash`. */
export function stampContent(hash) {
  return `${JSON.stringify({ sourceHash: hash })}\n`;
}

export function stampPath(root) {
  return join(root, STAMP_FILE);
}

/**
 * 'current': dist/ matches the sources (or there are no sources, as in the image); 'stale': the
 * sources changed since the build, or the build left no stamp; 'missing': nothing compiled.
 */
export function distState(root) {
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'entry.js'))) return 'missing';
  if (!existsSync(join(root, 'src', 'cli', 'entry.ts'))) return 'current';
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(stampPath(root), 'utf8')).sourceHash;
  } catch {
    return 'stale';
  }
  return recorded === sourceHash(root) ? 'current' : 'stale';
}
