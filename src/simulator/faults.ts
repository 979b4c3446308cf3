import type { FaultOptions, LatencyPoint } from './options.js';
import { validateFaults } from './options.js';
import { createRng, type Rng } from './rng.js';

export type FaultDecision =
  | { kind: 'drop' }
  | { kind: 'rate_limited'; retryAfterSec: number }
  | { kind: 'error'; status: number }
  | { kind: 'deadlock'; lockWait: boolean }
  | { kind: 'pass'; latencyMs: number; truncate: boolean };

/**
 * Decides each request's fault. Draws come from one RNG seeded by the simulator seed, in request
 * order, so a sequential test sees the same faults on every run. The rate limit is a fixed
 * one-second window per credential, so `Retry-After` is the time left in the window.
 */
export class FaultInjector {
  #faults: FaultOptions;
  #rng: Rng;
  /** A stream of its own, so enabling deadlocks does not shift the other faults' draws. */
  #deadlockRng: Rng;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly seed: number,
    faults: FaultOptions,
    private readonly now: () => number,
  ) {
    this.#faults = validateFaults(faults);
    this.#rng = createRng(seed ^ 0xfa017);
    this.#deadlockRng = createRng(seed ^ 0xdead10c);
  }

  get faults(): FaultOptions {
    return { ...this.#faults };
  }

  /** Replaces the faults and restarts the random stream, so a test can replay a sequence. */
  set(faults: FaultOptions): void {
    this.#faults = validateFaults(faults);
    this.#rng = createRng(this.seed ^ 0xfa017);
    this.#deadlockRng = createRng(this.seed ^ 0xdead10c);
    this.#windows.clear();
  }

  /**
   * `real`: the deployment mode, the only one where database deadlocks surface as 423. `perPage`:
   * the page size the request asked for (for latencies by page size).
   */
  decide(credential: string, isReport: boolean, real = false, perPage?: number): FaultDecision {
    const f = this.#faults;
    // Always draw the same number of values so one fault's rate does not shift another's stream.
    const dropDraw = this.#rng();
    const errorDraw = this.#rng();
    const truncDraw = this.#rng();
    const latencyDraw = this.#rng();
    if (f.rateLimitRps !== undefined) {
      const now = this.now();
      let w = this.#windows.get(credential);
      if (!w || now - w.start >= 1000) {
        w = { start: now, count: 0 };
        this.#windows.set(credential, w);
      }
      w.count++;
      if (w.count > f.rateLimitRps) return { kind: 'rate_limited', retryAfterSec: Math.max(1, Math.ceil((w.start + 1000 - now) / 1000)) };
    }
    if (f.dropRate && dropDraw < f.dropRate) return { kind: 'drop' };
    if (real && f.deadlockRate) {
      const draw = this.#deadlockRng();
      if (draw < f.deadlockRate) return { kind: 'deadlock', lockWait: draw < f.deadlockRate / 4 };
    }
    if (f.errorRate && errorDraw < f.errorRate) return { kind: 'error', status: [500, 502, 503][Math.floor(errorDraw * 1e6) % 3] as number };
    let latencyMs = 0;
    const l = f.latencyMs;
    if (l && 'min' in l) latencyMs = l.min + latencyDraw * (l.max - l.min);
    else if (l && 'mean' in l) latencyMs = Math.min(l.max ?? l.mean * 10, -Math.log(1 - latencyDraw) * l.mean);
    else if (l && 'byPerPage' in l) {
      const { min, max } = latencyAt(l.byPerPage, perPage);
      latencyMs = min + latencyDraw * (max - min);
    }
    if (isReport && f.slowReportsMs) latencyMs += f.slowReportsMs;
    return { kind: 'pass', latencyMs, truncate: !!f.truncateRate && truncDraw < f.truncateRate };
  }
}

/** The latency range at `perPage` (see LatencyOption's `byPerPage`). */
export function latencyAt(points: readonly LatencyPoint[], perPage: number | undefined): { min: number; max: number } {
  const first = points[0]!;
  if (perPage === undefined || !(perPage > first.perPage) || points.length === 1) return { min: first.min, max: first.max };
  let i = 1;
  while (i < points.length - 1 && perPage > points[i]!.perPage) i++;
  const a = points[i - 1]!;
  const b = points[i]!;
  const at = (x: number, y: number): number => Math.max(0, x + ((y - x) * (perPage - a.perPage)) / (b.perPage - a.perPage));
  return { min: at(a.min, b.min), max: at(a.max, b.max) };
}
