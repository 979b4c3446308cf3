import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedFixtureDir } from '../../helpers/shared-fixtures.js';

export interface Fixture {
  file: string;
  request: { method: string; path: string; query: Record<string, unknown> | null; query_string: string; body: unknown; headers: Record<string, string> };
  status: number;
  headers: Record<string, string>;
  body_is_json: boolean;
  body: unknown;
}

/**
 * Every captured response of the UTC site, or of another captured site (`site`, e.g. "site-ny");
 * throws (naming the folder) when ../shared or the site's folder is missing or holds none.
 */
export function loadFixtures(site?: string): Fixture[] {
  const dir = sharedFixtureDir(site);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length === 0) throw new Error(`No captured responses in ${dir}`);
  return files.sort().map((file) => ({ file, ...(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Omit<Fixture, 'file'>) }));
}

/** One capture by file name (`GET_subscribers_id.json`) among `fixtures`; throws naming it when it is not there. */
export function fixtureNamed(fixtures: readonly Fixture[], file: string): Fixture {
  const f = fixtures.find((x) => x.file === file);
  if (!f) throw new Error(`No capture named ${file} (${fixtures.length} captures loaded)`);
  return f;
}

/** The response body exactly as the server sent it (JSON re-encoded; raw text as is). */
export function bodyText(f: Fixture): string {
  if (!f.body_is_json) return typeof f.body === 'string' ? f.body : '';
  return JSON.stringify(f.body);
}
