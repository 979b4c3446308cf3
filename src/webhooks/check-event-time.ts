import { parseEventTime } from './event-payload.js';

/**
 * How far an event's own `timestamp` may lie from the receiver's clock. The CRM retries a failed
 * delivery after 1 min, 5 min, 30 min, 2 h and 24 h (about 26.6 h after the event), so the
 * default past limit admits its last retry with some slack; the future limit is clock skew.
 */
export interface EventTimeWindow {
  maxAgeMs: number;
  maxFutureMs: number;
}

export const DEFAULT_EVENT_TIME_WINDOW: EventTimeWindow = Object.freeze({ maxAgeMs: 30 * 3600_000, maxFutureMs: 5 * 60_000 });

/**
 * Null when the event time is inside the window, else why not (for the 400's message). `at` is
 * `parseEventTime(timestamp)` when the caller has it already.
 */
export function checkEventTime(timestamp: string, nowMs: number, window: EventTimeWindow, at = parseEventTime(timestamp)): string | null {
  if (!Number.isFinite(at)) return `The event timestamp ${JSON.stringify(timestamp.slice(0, 40))} is not a date.`;
  if (at < nowMs - window.maxAgeMs) {
    return `The event timestamp ${new Date(at).toISOString()} is more than ${fmt(window.maxAgeMs)} old (the CRM's retries end about 27 h after an event): a replay, or a clock error; the limit is CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS.`;
  }
  if (at > nowMs + window.maxFutureMs) {
    return `The event timestamp ${new Date(at).toISOString()} is more than ${fmt(window.maxFutureMs)} in the future: check the CRM's clock and time zone; the limit is CRMSYNC_WEBHOOK_MAX_CLOCK_SKEW_SECONDS.`;
  }
  return null;
}

function fmt(ms: number): string {
  return ms >= 3600_000 ? `${+(ms / 3600_000).toFixed(2)} h` : ms >= 60_000 ? `${+(ms / 60_000).toFixed(2)} min` : `${+(ms / 1000).toFixed(2)} s`;
}
