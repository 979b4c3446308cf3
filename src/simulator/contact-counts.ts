import { seededCore, type ContactCore } from './seed-data.js';

/** Contacts per tag (`t:ID`), list (`l:ID`), company (`c:ID`) and status (`s:STATUS`): all, and subscribed only. */
export interface Counts {
  total: Map<string, number>;
  subscribed: Map<string, number>;
}

/**
 * Counts = the seeded baseline (a pure function of the seed, filled in background chunks so the
 * first listing at 1M contacts does not pay for it) + the changes of every write since start.
 */
export class ContactCounts {
  readonly #baseline: Counts = { total: new Map(), subscribed: new Map() };
  #baselineNext = 1;
  #baselineTimer: NodeJS.Immediate | undefined;
  readonly #delta: Counts = { total: new Map(), subscribed: new Map() };

  constructor(
    private readonly seed: number,
    private readonly seededCount: number,
    private readonly companies: number,
  ) {}

  /** Computes the seeded baseline in the background so that the first tag listing at 1M is quick. */
  warm(): void {
    const step = (): void => {
      this.#scanBaseline(this.#baselineNext + 50_000);
      this.#baselineTimer = this.#baselineNext <= this.seededCount ? setImmediate(step) : undefined;
    };
    if (this.#baselineNext <= this.seededCount) this.#baselineTimer = setImmediate(step);
  }

  dispose(): void {
    if (this.#baselineTimer) clearImmediate(this.#baselineTimer);
    this.#baselineTimer = undefined;
  }

  #scanBaseline(untilId: number): void {
    const end = Math.min(untilId, this.seededCount + 1);
    for (let id = this.#baselineNext; id < end; id++) countCore(this.#baseline, seededCore(this.seed, id, this.companies), 1);
    this.#baselineNext = Math.max(this.#baselineNext, end);
  }

  snapshot(): Counts {
    this.#scanBaseline(Number.MAX_SAFE_INTEGER);
    const merged: Counts = { total: new Map(this.#baseline.total), subscribed: new Map(this.#baseline.subscribed) };
    for (const key of ['total', 'subscribed'] as const) {
      for (const [k, v] of this.#delta[key]) merged[key].set(k, (merged[key].get(k) ?? 0) + v);
    }
    return merged;
  }

  /** Count changes of one contact write: the old version out, the new one in. */
  applyWrite(old: ContactCore | undefined, next: ContactCore | undefined): void {
    if (old) countCore(this.#delta, old, -1);
    if (next) countCore(this.#delta, next, 1);
  }
}

export function countCore(counts: Counts, c: ContactCore, delta: number): void {
  const bump = (m: Map<string, number>, k: string): void => {
    m.set(k, (m.get(k) ?? 0) + delta);
  };
  bump(counts.total, `s:${c.status}`);
  if (c.status === 'subscribed') bump(counts.subscribed, `s:${c.status}`);
  for (const t of c.tags) {
    bump(counts.total, `t:${t}`);
    if (c.status === 'subscribed') bump(counts.subscribed, `t:${t}`);
  }
  for (const l of c.lists) {
    bump(counts.total, `l:${l}`);
    if (c.status === 'subscribed') bump(counts.subscribed, `l:${l}`);
  }
  for (const x of c.companyIds) {
    bump(counts.total, `c:${x}`);
    if (c.status === 'subscribed') bump(counts.subscribed, `c:${x}`);
  }
}
