import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * This command's build: the hash dist/ was stamped with when running compiled (bin/crmsync.js
 * runs dist/ only while it matches the sources), else the hash of the sources themselves, and the
 * node version. A background worker records it; a command of another build replaces the worker
 * rather than hand its runs to code it does not contain.
 */
export async function buildId(): Promise<string> {
  const url = import.meta.url;
  // This file is src/worker/ in the sources and dist/src/worker/ once compiled.
  const compiled = url.includes('/dist/src/worker/');
  const root = fileURLToPath(new URL(compiled ? '../../../' : '../../', url));
  let source: string;
  if (compiled) {
    const stamp = await readFile(`${root}dist/build-stamp.json`, 'utf8').catch(() => '');
    source = `dist:${stamp.trim() || 'unstamped'}`;
  } else {
    const stamp = (await import(new URL('bin/build-stamp.js', `file://${root}`).href)) as { sourceHash: (root: string) => string };
    source = `src:${stamp.sourceHash(root.replace(/\/$/, ''))}`;
  }
  return createHash('sha256').update(source).update('\0').update(process.version).digest('hex').slice(0, 16);
}
