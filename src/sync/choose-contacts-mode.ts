import type { ContactsMode, ReconcilePolicy } from '../../workflows/sync-types.js';
import type { ContactsState } from './contacts-state.js';

export interface ContactsModeChoice {
  mode: ContactsMode;
  resumeScan: boolean;
  maxId: number;
  /** Incremental runs sweep afterwards when this is set (or when counts disagree). */
  reconcileDue: boolean;
}

/**
 * Backfill on the first run or with --full; a scan left unfinished is resumed whatever was asked;
 * otherwise incremental, with a sweep due when asked, when the last run saw changes under it, or
 * when the last sweep is older than the cadence.
 */
export function chooseContactsMode(state: ContactsState, opts: { full: boolean; reconcile: ReconcilePolicy; reconcileEveryMs: number; nowMs: number }): ContactsModeChoice {
  if (state.activeScan) return { mode: state.activeScan.mode, resumeScan: true, maxId: state.maxId, reconcileDue: false };
  if (opts.full || !state.backfillDone) return { mode: 'backfill', resumeScan: false, maxId: state.maxId, reconcileDue: false };
  const stale = state.lastReconcileAtMs === null || opts.nowMs - state.lastReconcileAtMs >= opts.reconcileEveryMs;
  const reconcileDue = opts.reconcile === 'always' || (opts.reconcile === 'auto' && (state.needsReconcile || stale));
  return { mode: 'incremental', resumeScan: false, maxId: state.maxId, reconcileDue };
}
