import type { ContactWrite } from '../crm/types.js';

/** A reference to a tag or list as the source gave it: an id, or a title or slug. */
export type TaxonomyInput = number | string;

/** A source row mapped to the create body, before tags and lists are resolved to ids. */
/** One row read from the source. */
export interface SourceRow {
  /** Position in the source (1-based), for messages. */
  rowNumber: number;
  data: Record<string, unknown>;
  /** sha256 of the row as read: equal to the ledger's means nothing to check or send. */
  sourceFingerprint: string;
}

export interface ContactDraft {
  /** Row number in the source (1-based), for messages. */
  rowNumber: number;
  sourceFingerprint: string;
  /** Ledger key: the lower-cased email. */
  key: string;
  body: Omit<ContactWrite, 'tags' | 'lists'>;
  tags: TaxonomyInput[];
  lists: TaxonomyInput[];
}

/** Why a row is not sent: the field at fault and a message that names the fix. */
export interface RowRejection {
  rowNumber: number;
  key: string;
  email: string;
  field: string;
  reason: string;
}

export type DraftResult = { ok: true; draft: ContactDraft } | { ok: false; rejection: RowRejection };

export type PushAction = 'new' | 'changed' | 'retry' | 'unchanged' | 'invalid';

export const SENDABLE_ACTIONS: readonly PushAction[] = ['new', 'changed', 'retry'];

/** A row ready to send: the final body with tag and list ids, and its fingerprint. */
export interface ResolvedRow {
  rowNumber: number;
  sourceFingerprint: string;
  key: string;
  body: ContactWrite;
  fingerprint: string;
}

export interface PlannedRow extends ResolvedRow {
  action: Exclude<PushAction, 'invalid'>;
}

export type PushCounts = Record<PushAction, number>;

export function emptyCounts(): PushCounts {
  return { new: 0, changed: 0, retry: 0, unchanged: 0, invalid: 0 };
}
