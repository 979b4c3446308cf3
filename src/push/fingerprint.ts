import { createHash } from 'node:crypto';
import type { ContactWrite } from '../crm/types.js';

/**
 * Content fingerprint of a create body: sha256 over JSON with sorted keys (and tag and list ids
 * sorted), so the same row always gives the same value whatever the column order.
 */
export function fingerprintBody(body: ContactWrite): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortDeep(value));
}

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortDeep((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
