import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Bundling the workflows (webpack, in a child) is most of what a short `crmsync sync` spends
 * starting its worker. Workflows import only `@temporalio/workflow` and their own folder, so the
 * bundle is a function of that folder's files and the SDK's version: it is cached under
 * ~/.cache/crmsync/workflow-bundles by a hash of both, and rebuilt whenever either changes.
 */
export async function cachedWorkflowBundle(workflowsPath: string, build: () => Promise<{ code: string }>, cacheDir = defaultCacheDir()): Promise<{ code: string }> {
  const file = join(cacheDir, `${workflowBundleKey(workflowsPath)}.js`);
  const cached = await readFile(file, 'utf8').catch(() => undefined);
  if (cached) return { code: cached };
  const built = await build();
  try {
    await mkdir(cacheDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, built.code);
    await rename(tmp, file);
  } catch {
    // A cache that cannot be written only costs the next command a bundle.
  }
  return built;
}

export function workflowBundleKey(workflowsPath: string): string {
  const hash = createHash('sha256');
  const dir = dirname(workflowsPath);
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!/\.(ts|js|mjs|cjs|json)$/.test(name)) continue;
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(dir, name)))
      .update('\0');
  }
  const sdk = createRequire(import.meta.url)('@temporalio/workflow/package.json') as { version: string };
  hash.update(`sdk ${sdk.version} node ${process.version} entry ${workflowsPath}`);
  return hash.digest('hex').slice(0, 32);
}

function defaultCacheDir(): string {
  return join(homedir(), '.cache', 'crmsync', 'workflow-bundles');
}
