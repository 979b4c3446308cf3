// Pure, shared by the stream workflow and the small-stream activity (values only, no imports of
// Node or the SDK), so both name a finished stream's mode the same way.
import type { StreamName } from './streams.js';
import type { ContactsMode, StreamTotals } from './sync-types.js';

/** A re-read stream whose every row was new held nothing before: its first load is a backfill. */
export function modeAfterRun(stream: StreamName, full: boolean, totals: StreamTotals): ContactsMode {
  const firstLoad = stream !== 'reports' && totals.rows > 0 && totals.inserted === totals.rows && totals.updated + totals.unchanged + totals.deleted === 0;
  return full || firstLoad ? 'backfill' : 'incremental';
}
