import type { CustomFieldRec } from './model.js';

/** A definition as `/custom-fields/contacts` answers it; real mode keeps the group it was saved with. */
export type CustomFieldDef = CustomFieldRec & { group?: string };

const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

/**
 * The `fields` of `PUT /custom-fields/contacts`, which replace every definition as fluentcrm-2.9
 * saves them (PUT_custom-fields_contacts): in the order sent, the first of a repeated slug kept.
 * Not captured, from the plugin's saveGlobalFields: a field without a slug gets one from its
 * label, and a `fields` that is no list saves none. Entries that are not objects are skipped.
 */
export function readCustomFieldDefs(raw: unknown): CustomFieldDef[] {
  const entries = (Array.isArray(raw) ? raw : []).filter((f): f is Record<string, unknown> => typeof f === 'object' && f !== null && !Array.isArray(f));
  const taken = new Set(entries.map((f) => text(f.slug)).filter(Boolean));
  const out: CustomFieldDef[] = [];
  const kept = new Set<string>();
  for (const f of entries) {
    const slug = text(f.slug) || slugFromLabel(text(f.label), taken);
    if (!slug || kept.has(slug)) continue;
    kept.add(slug);
    taken.add(slug);
    const def: CustomFieldDef = { slug, label: text(f.label), type: text(f.type), fieldKey: text(f.field_key) };
    if (Array.isArray(f.options)) def.options = f.options.map(text);
    def.group = text(f.group) || 'default';
    out.push(def);
  }
  return out;
}

/** `Renewal Date` → `renewal_date`, at most 25 characters, numbered when taken. */
function slugFromLabel(label: string, taken: ReadonlySet<string>): string {
  const base = label
    .replace(/ /g, '_')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '')
    .slice(0, 25);
  if (!base) return '';
  let slug = /^\d+$/.test(base) ? `cf_${base}` : base;
  for (let n = 1; taken.has(slug); n++) slug = `${base}_${n}`;
  return slug;
}
