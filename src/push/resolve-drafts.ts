import type { ContactWrite } from '../crm/types.js';
import { fingerprintBody } from './fingerprint.js';
import { rejection } from './map-source-row.js';
import type { ContactDraft, ResolvedRow, RowRejection } from './push-types.js';
import type { TaxonomyIndex } from './taxonomy-index.js';

export interface ResolvedRows {
  resolved: ResolvedRow[];
  rejections: RowRejection[];
}

/** Names used by the drafts that match no existing tag or list (first spelling kept). */
export function collectMissing(drafts: readonly ContactDraft[], index: TaxonomyIndex, column: 'tags' | 'lists'): string[] {
  const missing = new Map<string, string>();
  for (const d of drafts) {
    const result = index.resolve(d[column]);
    if (!('missing' in result)) continue;
    for (const name of result.missing) if (!missing.has(name.toLowerCase())) missing.set(name.toLowerCase(), name);
  }
  return [...missing.values()];
}

/** Turns tag and list references into ids and fingerprints the final body. */
export function resolveDrafts(drafts: readonly ContactDraft[], tags: TaxonomyIndex, lists: TaxonomyIndex): ResolvedRows {
  const resolved: ResolvedRow[] = [];
  const rejections: RowRejection[] = [];
  for (const d of drafts) {
    const body: ContactWrite = { ...d.body };
    let failed: RowRejection | undefined;
    for (const [column, index] of [
      ['tags', tags],
      ['lists', lists],
    ] as const) {
      if (d[column].length === 0) continue;
      const result = index.resolve(d[column]);
      if ('ids' in result) {
        body[column] = result.ids;
        continue;
      }
      const reason =
        'unknownId' in result
          ? `no ${index.kind} has id ${result.unknownId}; use an existing id, or a title or slug`
          : `no ${index.kind} is titled or slugged "${result.missing[0]}"; create it in the CRM or pass --create-missing-tags`;
      failed = rejection(d.rowNumber, d.key, d.body.email, column, reason);
      break;
    }
    if (failed) rejections.push(failed);
    else resolved.push({ rowNumber: d.rowNumber, sourceFingerprint: d.sourceFingerprint, key: d.key, body, fingerprint: fingerprintBody(body) });
  }
  return { resolved, rejections };
}
