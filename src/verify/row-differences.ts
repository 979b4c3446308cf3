import type { WarehouseRow } from '../warehouse/verify-reads.js';
import { comparable, type ValueType } from './compare-values.js';
import { sides, type Difference } from './difference.js';

export interface RowStream {
  stream: string;
  /** Singular noun for messages ("tag", "funnel subscriber"). */
  noun: string;
  /** Columns compared, with their types. */
  columns: ReadonlyArray<readonly [string, ValueType]>;
  /** The row's identity, as text. */
  key: (row: Record<string, unknown>) => string;
  /** The column reported as title_mismatch rather than field_mismatch. */
  title?: string;
}

/**
 * A whole listing (read from the CRM) against the warehouse's live rows: rows missing from the
 * warehouse, rows live there but gone from the CRM, and each differing column.
 */
export function rowDifferences(spec: RowStream, crmRows: ReadonlyArray<Record<string, unknown>>, warehouseRows: readonly WarehouseRow[]): Difference[] {
  const held = new Map(warehouseRows.map((r) => [spec.key(r), r]));
  const seen = new Set<string>();
  const out: Difference[] = [];
  for (const c of crmRows) {
    const id = spec.key(c);
    if (seen.has(id)) continue;
    seen.add(id);
    const row = held.get(id);
    if (!row) {
      out.push({ stream: spec.stream, kind: 'missing_in_warehouse', id, detail: `${spec.noun} ${id} is in the CRM but not live in the warehouse` });
      continue;
    }
    for (const [field, type] of spec.columns) {
      const crm = comparable(type, c[field]);
      const warehouse = comparable(type, row[field]);
      if (crm === warehouse) continue;
      const kind = field === spec.title ? 'title_mismatch' : 'field_mismatch';
      out.push({ stream: spec.stream, kind, id, field, warehouse, crm, detail: `${spec.noun} ${id}: ${field} ${sides(warehouse, crm)}` });
    }
  }
  for (const id of held.keys()) {
    if (!seen.has(id)) out.push({ stream: spec.stream, kind: 'deleted_in_crm', id, detail: `${spec.noun} ${id} is live in the warehouse but no longer in the CRM` });
  }
  return out;
}
