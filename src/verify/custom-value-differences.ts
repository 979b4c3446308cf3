import { canonicalJson } from './compare-values.js';

export interface CustomValueDifference {
  slug: string;
  warehouse: string | null;
  crm: string | null;
}

/**
 * Custom values per field slug. The CRM sends them as `custom_values` or (real listings with
 * `custom_fields=true`) `custom_fields`, an object by slug or `[]` when empty; the client gives an
 * object either way and the warehouse holds JSON text. A missing slug, null and '' are one "no value";
 * multi-value fields compare as their JSON arrays.
 */
export function customValueDifferences(crm: unknown, warehouse: unknown): CustomValueDifference[] {
  const a = asValues(crm);
  const b = asValues(warehouse);
  const out: CustomValueDifference[] = [];
  for (const slug of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const want = valueText(a[slug]);
    const have = valueText(b[slug]);
    if (want !== have) out.push({ slug, warehouse: have, crm: want });
  }
  return out;
}

function asValues(v: unknown): Record<string, unknown> {
  let x = v;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch {
      return {};
    }
  }
  return x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

function valueText(v: unknown): string | null {
  if (v === null || v === undefined || v === '') return null;
  if (Array.isArray(v)) return v.length === 0 ? null : canonicalJson(v.map(String));
  if (typeof v === 'object') return canonicalJson(v);
  return String(v);
}
