import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { Logger } from '../src/logger.js';
import type { SyncCrmClient } from '../src/sync/crm-port.js';
import type { WriteJobs } from '../src/sync/warehouse-port.js';

/** What sync activities are built over: injected, so tests pass a real simulator-backed client and a temp DuckDB. */
export interface SyncActivityDeps {
  client: SyncCrmClient;
  /** The process's single DuckDB writer. */
  writes: WriteJobs;
  logger: Logger;
  /** Wall clock (activities may read it; workflows never do). */
  now?: () => number;
  /** CRMSYNC_PUBLISH_EVERY; 0: a contact scan publishes nothing before its run's final publish. */
  publishEveryMs?: number;
  /**
   * How a contact scan's pages reach the warehouse (CRMSYNC_SYNC_CONTACT_PAGES; default `raw`):
   * `raw`, the bodies as sent, parsed and typed by DuckDB (`loadContactPages`), rows that do not
   * fit recorded in `_contact_rejects`; `parsed`, parsed and checked in JavaScript, where a row that
   * does not fit fails its page.
   */
  contactPages?: 'raw' | 'parsed';
  /**
   * Whether a contact scan types its next load on the owner's typing lane while one loads
   * (CRMSYNC_SYNC_TYPE_ASIDE; default true; the contact sink's `typeAside`).
   */
  typeAside?: boolean;
  /**
   * How long a scan's page may wait for others to join its load (the contact sink's `lingerMs`,
   * default 200 ms): tests set it long to see that a range's last pages load without it.
   */
  contactLingerMs?: number;
  /** Concurrent targeted fetches when confirming tombstone candidates. */
  confirmConcurrency?: number;
}

/** The running activity's context, or undefined when called outside a worker (direct calls in tests). */
export function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * The client for the running activity: its requests in flight, and its scans, are aborted when the
 * activity is cancelled (outside a worker, as in direct calls from tests, the client itself).
 */
export function activityClient(client: SyncCrmClient): SyncCrmClient {
  const ctx = currentActivity();
  return ctx ? client.withSignal(ctx.cancellationSignal) : client;
}

/** Heartbeats `details` now and every second until stopped, so slow requests do not look like a dead worker. */
export function startHeartbeats(details: () => unknown): { beat(): void; stop(): void; throwIfCancelled(): void } {
  const ctx = currentActivity();
  const beat = (): void => ctx?.heartbeat(details());
  beat();
  const timer = ctx ? setInterval(beat, 1_000) : undefined;
  timer?.unref();
  return {
    beat,
    stop: () => {
      if (timer) clearInterval(timer);
    },
    throwIfCancelled: () => {
      if (ctx?.cancellationSignal.aborted) throw new CancelledFailure('Activity cancelled');
    },
  };
}
