import type { Contact } from '../crm/types.js';
import { CONTACT_COLUMNS } from '../warehouse/contact-columns.js';
import type { WarehouseRow } from '../warehouse/verify-reads.js';
import { comparable, type ValueType } from './compare-values.js';
import { customValueDifferences } from './custom-value-differences.js';
import { sides, type Difference } from './difference.js';

/** The CRM's value for a typed contact column (memberships as their ids). */
function crmValue(c: Contact, column: string): unknown {
  if (column === 'tag_ids') return c.tags;
  if (column === 'list_ids') return c.lists;
  return (c as unknown as Record<string, unknown>)[column];
}

/** Every typed column but `custom_values`, compared one by one. */
const FIELDS = CONTACT_COLUMNS.filter(([name]) => name !== 'id' && name !== 'custom_values') as ReadonlyArray<readonly [string, ValueType]>;

/** Field and custom value differences of one contact present on both sides. */
export function contactDifferences(c: Contact, row: WarehouseRow): Difference[] {
  const out: Difference[] = [];
  const id = String(c.id);
  for (const [field, type] of FIELDS) {
    const crm = comparable(type, crmValue(c, field));
    const warehouse = comparable(type, row[field]);
    if (crm !== warehouse) {
      out.push({ stream: 'contacts', kind: 'contact_field_mismatch', id, field, warehouse, crm, detail: `contact ${id}: ${field} ${sides(warehouse, crm)}` });
    }
  }
  for (const d of customValueDifferences(c.custom_values, row.custom_values)) {
    out.push({
      stream: 'contacts',
      kind: 'custom_value_mismatch',
      id,
      field: d.slug,
      warehouse: d.warehouse,
      crm: d.crm,
      detail: `contact ${id}: custom field ${d.slug} ${sides(d.warehouse, d.crm)}`,
    });
  }
  return out;
}
