import type { CustomField } from '../crm/types.js';
import { mapSourceRow, rejection } from './map-source-row.js';
import type { ContactDraft, RowRejection, SourceRow } from './push-types.js';

export interface DraftedRows {
  drafts: ContactDraft[];
  rejections: RowRejection[];
}

/**
 * Maps and checks every source row. Rows sharing an email (case-insensitively) are all rejected:
 * the CRM would merge them in arrival order, so which one wins would be an accident.
 */
export function draftRows(rows: readonly SourceRow[], fields: ReadonlyMap<string, CustomField>): DraftedRows {
  const byKey = new Map<string, ContactDraft[]>();
  const rejections: RowRejection[] = [];
  for (const row of rows) {
    const result = mapSourceRow(row.data, row.rowNumber, fields, row.sourceFingerprint);
    if (!result.ok) {
      const r = result.rejection;
      // A row without a usable email still gets a ledger entry, keyed by its position.
      rejections.push(r.key.length > 0 ? r : { ...r, key: `row:${r.rowNumber}` });
      continue;
    }
    const same = byKey.get(result.draft.key);
    if (same) same.push(result.draft);
    else byKey.set(result.draft.key, [result.draft]);
  }
  const drafts: ContactDraft[] = [];
  for (const group of byKey.values()) {
    const [first] = group;
    if (group.length === 1 && first) {
      drafts.push(first);
      continue;
    }
    const rowList = group
      .map((d) => d.rowNumber)
      .slice(0, 10)
      .join(', ');
    for (const d of group) {
      rejections.push(rejection(d.rowNumber, d.key, d.body.email, 'email', `${group.length} source rows have this email (rows ${rowList}); keep one row per email`));
    }
  }
  drafts.sort((a, b) => a.rowNumber - b.rowNumber);
  return { drafts, rejections };
}
