import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export const FIXTURE_DIR = join(import.meta.dirname, '../../../../shared/fixtures/fluentcrm-2.9');

export interface Fixture {
  file: string;
  request: { method: string; path: string; query: Record<string, unknown> | null; query_string: string; body: unknown; headers: Record<string, string> };
  status: number;
  headers: Record<string, string>;
  body_is_json: boolean;
  body: unknown;
}

export function loadFixtures(): Fixture[] {
  if (!existsSync(FIXTURE_DIR)) return [];
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(FIXTURE_DIR, file), 'utf8')) as Omit<Fixture, 'file'>) }));
}

/** The response body exactly as the server sent it (JSON re-encoded; raw text as is). */
export function bodyText(f: Fixture): string {
  if (!f.body_is_json) return typeof f.body === 'string' ? f.body : '';
  return JSON.stringify(f.body);
}
