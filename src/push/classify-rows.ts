import type { LedgerState } from '../warehouse/push-ledger-store.js';
import type { PlannedRow, ResolvedRow } from './push-types.js';

export interface Classified {
  planned: PlannedRow[];
  unchanged: ResolvedRow[];
  /** Unchanged rows whose ledger entry shows a later rejection or failure, or another raw row. */
  settled: { key: string; sourceFingerprint: string }[];
}

/**
 * Compares each row with the content last accepted by the CRM. Unchanged rows are skipped; rows
 * whose last attempt failed are retried every run until they succeed.
 */
export function classifyRows(rows: readonly ResolvedRow[], ledger: ReadonlyMap<string, LedgerState>): Classified {
  const planned: PlannedRow[] = [];
  const unchanged: ResolvedRow[] = [];
  const settled: Classified['settled'] = [];
  for (const row of rows) {
    const state = ledger.get(row.key);
    if (state?.pushedFingerprint === row.fingerprint) {
      unchanged.push(row);
      if (state.outcome !== 'succeeded' || state.sourceFingerprint !== row.sourceFingerprint) {
        settled.push({ key: row.key, sourceFingerprint: row.sourceFingerprint });
      }
    } else if (state?.outcome === 'failed') {
      planned.push({ ...row, action: 'retry' });
    } else if (state?.pushedFingerprint) {
      planned.push({ ...row, action: 'changed' });
    } else {
      planned.push({ ...row, action: 'new' });
    }
  }
  return { planned, unchanged, settled };
}
