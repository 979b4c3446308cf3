import { CrmError } from './errors.js';

/**
 * Process-wide rate control for CRM requests: a concurrency cap plus a requests-per-second budget
 * (a token bucket with a burst of about one request, so requests go out evenly spaced), adapted
 * from what the server says:
 *
 * - without a configured budget it sends its first requests at once, up to the concurrency cap,
 *   then paces from `initialRps` and doubles about every quarter second while the limiter is the
 *   bottleneck (slow start) until the first 429;
 * - a 429 pauses everyone for Retry-After; when the last second's traffic ran at the budget (at
 *   least 4 requests, held back by the budget or at half of it or more), it also records that send
 *   rate (less the refused request) as the server's limit and drops to 85% of it; later 429s from
 *   requests sent before that drop are not counted again. A 429 amid sparse traffic (the window
 *   filled by another process on the same credential, or a server-side burst) teaches nothing: a
 *   limit learned from it was a rate the run never tried to exceed, and it held the run there;
 * - afterwards it climbs quickly back to 95% of the learned limit, then probes above it slowly
 *   (about 1% of the limit per 20 s) so it stays just under the limit instead of oscillating;
 * - a sustained rise in latency (4x the best seen, and 500 ms over it) stops the climb and backs off 10%;
 * - a limit learned during a burst of 429s far below a rate the server had accepted is taken as a
 *   transient storm: after `stormRecoveryMs` without a 429 the limiter returns to 90% of that
 *   known-good rate (climbing, not jumping). If a 429 follows promptly, the old rate is forgotten,
 *   so a server that really lowered its limit costs one extra 429, not an oscillation.
 */
export interface RateLimiterOptions {
  /** Hard ceiling in requests/s (CRM_MAX_RPS). When set, the limiter starts there. */
  maxRps?: number;
  /**
   * Starting rate when no ceiling is configured (default 20: from 10, a scan's first requests
   * waited for their slots while the answers took 150 ms; bench/results/notes.md).
   */
  initialRps?: number;
  /** Floor of the adaptive rate (default 0.5). */
  minRps?: number;
  /** Requests in flight at once (CRM_MAX_CONCURRENCY, default 8). */
  maxConcurrency?: number;
  /** false: a fixed budget, no adaptation (429s still pause). Default true. */
  adaptive?: boolean;
  /** Quiet time after a 429 storm before returning towards the known-good rate (default 5000 ms). */
  stormRecoveryMs?: number;
  /** Injected clock for tests. */
  now?: () => number;
}

export type RequestOutcome = { kind: 'ok'; latencyMs: number } | { kind: 'rateLimited'; retryAfterMs?: number } | { kind: 'error' };

export interface Ticket {
  /** Report how the request went; frees the concurrency slot. Idempotent. */
  release(outcome: RequestOutcome): void;
}

export interface RateLimiterSnapshot {
  rps: number;
  learnedLimitRps: number | undefined;
  phase: 'slow_start' | 'steady';
  inFlight: number;
  queued: number;
  pausedForMs: number;
  granted: number;
  rateLimited: number;
}

export interface RateLimiter {
  /**
   * Waits for a slot. Waiters go in order of `priority` (lower first, default 0), then of arrival:
   * a scan passes its page number, so when several scans share the slots the earliest pages go
   * first and one scan finishes while the others go on, instead of all of them finishing together
   * and leaving every slot idle while each waits for its last pages to load.
   */
  acquire(signal?: AbortSignal, priority?: number): Promise<Ticket>;
  /** Holds every request until `ms` from now (the server's Retry-After). */
  pause(ms: number): void;
  snapshot(): RateLimiterSnapshot;
}

export class RateLimiterAbortedError extends CrmError {
  constructor() {
    super('CRM_REQUEST_ABORTED', 'The CRM request was cancelled while waiting for the rate limiter', { retryable: false });
  }
}

interface Waiter {
  priority: number;
  resolve: (t: Ticket) => void;
  reject: (e: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

const DEFAULT_PAUSE_MS = 1000;
/**
 * Slow start's growth for each answered request: the rate grows by about three times itself a
 * second, so it doubles in about a quarter of a second of saturated traffic. At one per request
 * (doubling in about 0.7 s) a backfill's first seconds ran well under what the server answered,
 * while the 429s an overshoot costs are bounded by the requests in flight either way: the first
 * 429 pauses everyone (bench/results/notes.md, "Issue 19, the client's slow start").
 */
export const SLOW_START_STEP = 3;
/** Fewest requests in the second before a 429 for their rate to count as the server's limit. */
const MIN_SAMPLE = 4;

export function createRateLimiter(opts: RateLimiterOptions = {}): RateLimiter {
  const now = opts.now ?? (() => performance.now());
  const ceiling = opts.maxRps ?? Infinity;
  const minRps = Math.min(opts.minRps ?? 0.5, ceiling);
  const maxConcurrency = Math.max(1, Math.floor(opts.maxConcurrency ?? 8));
  const adaptive = opts.adaptive ?? true;
  if (!(ceiling > 0)) throw new RangeError(`maxRps must be positive, got ${opts.maxRps}`);

  let rps = Math.min(ceiling, opts.maxRps ?? opts.initialRps ?? 20);
  let phase: 'slow_start' | 'steady' = opts.maxRps !== undefined || !adaptive ? 'steady' : 'slow_start';
  let learned: number | undefined;
  const stormRecoveryMs = opts.stormRecoveryMs ?? 5_000;
  /** Highest send rate (per second) the server accepted with no 429 around it. */
  let bestOkRps = 0;
  let restoredAt = -Infinity;
  let lastDecreaseAt = -Infinity;
  let lastLatencyCutAt = -Infinity;
  let pausedUntil = -Infinity;
  let nextSlot = -Infinity;
  let inFlight = 0;
  let granted = 0;
  let rateLimited = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let saturatedAt = -Infinity;
  let bestLatency = Infinity;
  let ewmaLatency: number | undefined;
  const queue: Waiter[] = [];
  const recentGrants: number[] = []; // dispatch times within the last second

  const interval = () => 1000 / rps;

  function sendRate(t: number): number {
    while (recentGrants.length && recentGrants[0]! < t - 1000) recentGrants.shift();
    return recentGrants.length;
  }

  function pump(): void {
    timer = undefined;
    while (queue.length > 0 && inFlight < maxConcurrency) {
      const t = now();
      const burst = phase === 'slow_start' && granted < maxConcurrency;
      const wait = Math.max(pausedUntil - t, burst ? -Infinity : nextSlot - t);
      if (wait > 0) {
        timer = setTimeout(pump, Math.max(1, Math.ceil(wait)));
        if (nextSlot >= pausedUntil) saturatedAt = t; // held back by the budget, not by a pause
        return;
      }
      // Slow start's first requests go out together, up to the concurrency cap: no more than the
      // cap lets be in flight at once, so a server that refuses them answers that many 429s at
      // most, the bound a discovery's overshoot has anyway; pacing starts after them. Paced from
      // the first request instead, a backfill's first range requests went out one by one while
      // the cap allowed them all at once (bench/results/notes.md, "a slow start that begins at
      // the cap").
      // Otherwise a burst of at most half an interval: a late timer tick is recovered, idle time
      // is not banked.
      nextSlot = burst ? Math.max(nextSlot, t + interval() / 2) : Math.max(nextSlot, t - interval() / 2) + interval();
      inFlight++;
      granted++;
      recentGrants.push(t);
      if (recentGrants.length > 256) sendRate(t); // keep only the last second

      const w = queue.shift()!;
      if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
      w.resolve(makeTicket(t, burst));
    }
  }

  function makeTicket(dispatchedAt: number, burst: boolean): Ticket {
    let released = false;
    return {
      release(outcome) {
        if (released) return;
        released = true;
        inFlight--;
        onOutcome(outcome, dispatchedAt, burst);
        if (queue.length > 0 && timer === undefined) pump();
      },
    };
  }

  function onOutcome(o: RequestOutcome, dispatchedAt: number, burst: boolean): void {
    const t = now();
    if (o.kind === 'rateLimited') {
      rateLimited++;
      pause(o.retryAfterMs ?? DEFAULT_PAUSE_MS);
      if (!adaptive || dispatchedAt < lastDecreaseAt) return; // same episode: already reacted
      // Refused in slow start's opening burst: a server that limits with a token bucket refuses
      // requests sent together beyond its burst, whatever its rate (at 40/s with a burst of 2, the
      // run learned 7/s from them and stayed there). Pacing goes on in slow start.
      if (burst) return;
      // Sparse traffic says nothing about the server's allowance (the window was filled by someone
      // else, or by a burst the limiter did not send): Retry-After is honoured, nothing is learned.
      if (!measuresLimit(t)) return;
      // Refused soon after returning to the old rate: the server's limit really is lower now.
      if (t - restoredAt < stormRecoveryMs) bestOkRps = 0;
      if (phase === 'steady' && learned !== undefined && rps > learned * 0.95) {
        // Refused while probing above the known-good rate: the limit is where it was; step back under it.
        learned = Math.min(learned, rps);
        rps = Math.max(minRps, learned * 0.93);
      } else {
        // Requests sent in the last second, less the one refused, approximate what the server allows
        // (an upper bound while the rate was still climbing: a second 429 then corrects it).
        const sent = sendRate(t);
        learned = Math.max(minRps, Math.min(rps, sent > 1 ? sent - 1 : rps));
        rps = Math.max(minRps, learned * 0.85);
      }
      phase = 'steady';
      lastDecreaseAt = t;
      nextSlot = Math.max(nextSlot, pausedUntil);
      return;
    }
    if (o.kind !== 'ok' || !adaptive) return;
    const lat = o.latencyMs;
    bestLatency = Math.min(bestLatency, lat);
    ewmaLatency = ewmaLatency === undefined ? lat : ewmaLatency * 0.9 + lat * 0.1;
    // A loaded client machine also slows responses; only a large, sustained rise counts as the server's.
    const slow = ewmaLatency > Math.max(4 * bestLatency, bestLatency + 500);
    if (slow) {
      if (t - lastLatencyCutAt > 2000 && t - saturatedAt < 1000) {
        rps = Math.max(minRps, rps * 0.9);
        lastLatencyCutAt = t;
      }
      return;
    }
    if (t - lastDecreaseAt > 2000) bestOkRps = Math.max(bestOkRps, sendRate(t));
    if (phase === 'steady' && learned !== undefined && t - lastDecreaseAt > stormRecoveryMs && bestOkRps * 0.9 > learned) {
      learned = bestOkRps * 0.9; // a storm, not a new limit: the climb below heads back there
      restoredAt = t;
    }
    // Grow only while the budget is what holds requests back, so an idle period does not bank rate.
    if (t - saturatedAt > 1000) return;
    if (phase === 'slow_start') {
      rps = Math.min(ceiling, rps + SLOW_START_STEP);
    } else if (learned === undefined || rps < learned * 0.95) {
      const target = learned === undefined ? ceiling : learned * 0.95;
      rps = Math.min(ceiling, target, rps + Math.max(1, (learned ?? rps) * 0.1) / rps);
    } else {
      rps = Math.min(ceiling, rps + (learned * 0.0005) / rps); // about 1% of the limit per 20 s
      if (rps > learned) learned = rps; // probed past it without a 429: the limit is higher
    }
  }

  /**
   * Whether the last second's sends measure what the server allows: enough of them to be a rate,
   * sent at the budget (the budget held requests back, or they came at half of it or more).
   */
  function measuresLimit(t: number): boolean {
    const sent = sendRate(t) - 1; // less the refused request
    return sent >= MIN_SAMPLE && (t - saturatedAt < 1000 || sent >= rps / 2);
  }

  function pause(ms: number): void {
    if (!(ms > 0)) return;
    const until = now() + ms;
    if (until > pausedUntil) pausedUntil = until;
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (queue.length > 0) pump();
  }

  return {
    acquire(signal, priority = 0) {
      if (signal?.aborted) return Promise.reject(new RateLimiterAbortedError());
      return new Promise<Ticket>((resolve, reject) => {
        const w: Waiter = { priority, resolve, reject, signal, onAbort: undefined };
        if (signal) {
          w.onAbort = () => {
            const i = queue.indexOf(w);
            if (i >= 0) queue.splice(i, 1);
            reject(new RateLimiterAbortedError());
          };
          signal.addEventListener('abort', w.onAbort, { once: true });
        }
        // After every waiter of the same or a lower priority (the queue stays sorted, ties in arrival order).
        let at = queue.length;
        while (at > 0 && queue[at - 1]!.priority > priority) at--;
        queue.splice(at, 0, w);
        if (timer === undefined) pump();
      });
    },
    pause,
    snapshot() {
      return {
        rps,
        learnedLimitRps: learned,
        phase,
        inFlight,
        queued: queue.length,
        pausedForMs: Math.max(0, pausedUntil - now()),
        granted,
        rateLimited,
      };
    },
  };
}

/**
 * The per-process shared limiters, one per CRM origin and user (servers limit per credential), so
 * every client, activity and command in one process draws from the same budget. The first caller's
 * options win for a key. This map is the one deliberate module-level registry in src/crm.
 */
const shared = new Map<string, RateLimiter>();

export function sharedRateLimiter(key: string, opts: RateLimiterOptions = {}): RateLimiter {
  let l = shared.get(key);
  if (!l) {
    l = createRateLimiter(opts);
    shared.set(key, l);
  }
  return l;
}
