import { z } from 'zod';
import type { WarehouseSession } from './warehouse-port.js';

/** A contact scan in progress; kept in `_sync_state` so that any restart resumes it. */
export const ActiveScan = z.object({
  scanKey: z.string(),
  mode: z.enum(['backfill', 'reconcile']),
  perPage: z.number().int().positive(),
  total: z.number().int().nonnegative(),
  lastPage: z.number().int().nonnegative(),
  /** Highest contact id held when the scan began: tombstoning never goes above it. */
  maxIdAtStart: z.number().int().nonnegative(),
  /** Total and highest id the CRM reported when the scan began: a change means drift. */
  crmTotalAtStart: z.number().int().nonnegative(),
  crmMaxIdAtStart: z.number().int().nonnegative(),
  startedAtMs: z.number(),
});
export type ActiveScan = z.infer<typeof ActiveScan>;

export const ContactsState = z.object({
  backfillDone: z.boolean().default(false),
  /** Highest contact id loaded: incremental runs read ids above it, newest first. */
  maxId: z.number().int().nonnegative().default(0),
  lastReconcileAtMs: z.number().nullable().default(null),
  /** Set when a run saw the CRM change under it: the next run sweeps. */
  needsReconcile: z.boolean().default(false),
  activeScan: ActiveScan.nullable().default(null),
  lastRunAtMs: z.number().nullable().default(null),
  /**
   * Whether the CRM orders contacts by `updated_at` (probed on the rows it returns, not trusted
   * from the parameter), and when that was found out.
   */
  updatedOrder: z.object({ supported: z.boolean(), probedAtMs: z.number() }).nullable().default(null),
  /** Newest `updated_at` (ISO UTC) the updated-first scan has seen: the next one reads back to it, less an overlap. */
  updatedWatermark: z.string().nullable().default(null),
  /** Rows the last updated-first scan found past its cutoff (the overlap's): few, and the next one asks a small page first. */
  updatedWindowRows: z.number().int().nonnegative().nullable().default(null),
  /** Rolling sweep: the last contact id the current cycle has re-read, and when and how many runs ago the cycle began. */
  sweepCursorId: z.number().int().nonnegative().default(0),
  sweepCycleStartedAtMs: z.number().nullable().default(null),
  sweepCycleRuns: z.number().int().nonnegative().default(0),
  /** The configured cycle length (--sweep-runs) the last slice was sized for. */
  sweepRuns: z.number().int().positive().nullable().default(null),
  /** When the last full rolling-sweep cycle began: every contact has been re-read since then. */
  lastSweepCycleStartedAtMs: z.number().nullable().default(null),
});
export type ContactsState = z.infer<typeof ContactsState>;

export const CONTACTS_STATE_KEY = 'contacts';

export async function readContactsState(w: WarehouseSession): Promise<ContactsState> {
  const raw = await w.getSyncState(CONTACTS_STATE_KEY);
  const parsed = ContactsState.safeParse(raw ?? {});
  // An unreadable state (older format) is treated as none: the next run backfills, which is safe.
  return parsed.success ? parsed.data : ContactsState.parse({});
}

export async function writeContactsState(w: WarehouseSession, state: ContactsState): Promise<void> {
  await w.setSyncState(CONTACTS_STATE_KEY, state as unknown as Record<string, unknown>);
}
