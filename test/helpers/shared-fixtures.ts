import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root, whatever folder the checkout is in. */
const REPO = resolve(import.meta.dirname, '..', '..');

/**
 * The captured fluentcrm-2.9 responses in `../shared` next to the checkout (as the project is
 * laid out, and as CI lays it out); with `site`, the folder of another captured site inside it
 * (`site-ny`). Fails loudly when they are missing: a test that needs them must not pass by skipping.
 */
export function sharedFixtureDir(site?: string): string {
  const dir = join(REPO, '..', 'shared', 'fixtures', 'fluentcrm-2.9');
  if (!existsSync(dir)) {
    throw new Error(`The captured CRM responses are missing: expected ${dir} (../shared/fixtures/fluentcrm-2.9 next to the checkout). Copy or link the project's shared/ folder there.`);
  }
  if (site === undefined) return dir;
  const siteDir = join(dir, site);
  if (!existsSync(siteDir)) {
    throw new Error(`The captured responses of site "${site}" are missing: expected ${siteDir}. Copy or link the whole shared/fixtures/fluentcrm-2.9 folder, with its ${site}/ subfolder.`);
  }
  return siteDir;
}
