import type { Logger } from '../logger.js';
import type { SeenTable } from './seen-table.js';

export type AppendOutcome = 'accepted' | 'duplicate' | 'replayed';

export type AppendDone = (err: Error | null, outcome?: AppendOutcome) => void;

/** An append in flight: later copies of its delivery id or body wait for it. */
export interface InflightAppend {
  waiting: (() => void)[] | undefined;
  failed: Error | undefined;
  /** Its position in the seen table, set by `enter`. */
  seenAt: number;
}

/** What the spool has seen, by delivery id and by body, over the retention. */
export interface DedupeIndex {
  /** Answers a delivery id seen before (at once, or when the append in flight settles): true; false for a new one. */
  answerDuplicate(deliveryId: string, done: AppendDone): boolean;
  /** The same for a body seen before under another delivery id (a replay). */
  answerReplay(bodyKey: string, done: AppendDone): boolean;
  /** A new append in flight: copies of it wait on it. */
  enter(deliveryId: string, bodyKey: string, append: InflightAppend): void;
  /** The append is durable at `seq` (its place in the table is kept). */
  durable(append: Pick<InflightAppend, 'seenAt'>, seq: number): void;
  /** A failed append is not "seen": the CRM's retry of it must be stored, not called a duplicate. */
  forget(append: InflightAppend): void;
  /** Calls the append's `done`, then every copy that waits on it. */
  settle(append: InflightAppend, done: AppendDone, err: Error | null, outcome?: AppendOutcome): void;
  /** Drops what is durable up to `lastSeq` (a pruned segment). */
  prune(lastSeq: number): void;
  /** Delivery ids kept, appends in flight included. */
  readonly deliveries: number;
}

/**
 * Delivery ids and body keys seen: the seq of a durable one, or the append in flight that later
 * copies wait on. One table of both keys, in seq order (an append is entered as it gets its seq,
 * and becoming durable keeps its place): `seen` is the recovered table.
 */
export function createDedupeIndex(seen: SeenTable<InflightAppend>, logger?: Logger): DedupeIndex {
  // Callbacks run inside the writer's completion loop: one that throws must not stop the loop (the
  // rest of the batch would never be answered). It is the caller's bug, logged, not the spool's.
  const calling = (done: AppendDone, err: Error | null, outcome?: AppendOutcome): void => {
    try {
      done(err, outcome);
    } catch (failure) {
      logger?.error({ err: { message: (failure as Error).message } }, 'spool: an append callback threw; the other appends are still answered');
    }
  };
  // A copy waits for the append in flight and shares its failure, as it would share its promise.
  const answer = (seen: number | InflightAppend | undefined, outcome: AppendOutcome, done: AppendDone): boolean => {
    if (seen === undefined) return false;
    if (typeof seen === 'number') done(null, outcome);
    else (seen.waiting ??= []).push(() => calling(done, seen.failed ?? null, seen.failed ? undefined : outcome));
    return true;
  };
  return {
    answerDuplicate: (deliveryId, done) => answer(seen.byId(deliveryId), 'duplicate', done),
    answerReplay: (bodyKey, done) => answer(seen.byBody(bodyKey), 'replayed', done),
    enter(deliveryId, bodyKey, append) {
      append.seenAt = seen.add(deliveryId, bodyKey, append);
    },
    durable(append, seq) {
      seen.set(append.seenAt, seq);
    },
    forget(append) {
      seen.remove(append.seenAt);
    },
    settle(append, done, err, outcome) {
      calling(done, err, outcome);
      const waiting = append.waiting;
      append.waiting = undefined;
      if (waiting) for (const w of waiting) w();
    },
    prune: (lastSeq) => seen.prune(lastSeq),
    get deliveries() {
      return seen.size;
    },
  };
}
