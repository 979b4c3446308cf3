import { clip, type CheckFailure } from './field-checks.js';
import type { TaxonomyInput } from './push-types.js';

export const MAX_TAXONOMY_REFS = 200;
const MAX_REF_LENGTH = 190;

/**
 * Tags and lists cells: a list (DuckDB LIST), a JSON array string, or a comma-separated string.
 * Each item is an id (number or digits) or a title or slug.
 */
export function parseTaxonomyRefs(cell: unknown): { refs: TaxonomyInput[] } | CheckFailure {
  if (cell === null || cell === undefined || cell === '') return { refs: [] };
  let items: unknown[];
  if (Array.isArray(cell)) items = cell;
  else if (typeof cell === 'number') items = [cell];
  else if (typeof cell === 'string') items = splitText(cell);
  else return { message: 'must be a list of ids, titles or slugs' };
  if (items.length > MAX_TAXONOMY_REFS) return { message: `has ${items.length} entries (limit ${MAX_TAXONOMY_REFS})` };
  const refs: TaxonomyInput[] = [];
  for (const item of items) {
    if (item === null || item === undefined || item === '') continue;
    if (typeof item === 'number') {
      if (!Number.isSafeInteger(item) || item <= 0) return { message: `${item} is not a valid id` };
      refs.push(item);
      continue;
    }
    if (typeof item !== 'string') return { message: 'entries must be ids, titles or slugs' };
    const text = item.trim();
    if (text.length === 0) continue;
    if (text.length > MAX_REF_LENGTH) return { message: `entry "${clip(text)}" is too long (limit ${MAX_REF_LENGTH})` };
    refs.push(/^\d+$/.test(text) ? Number(text) : text);
  }
  return { refs };
}

function splitText(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: treat as comma-separated
    }
  }
  return trimmed.split(',');
}
