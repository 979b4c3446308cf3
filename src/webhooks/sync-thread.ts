import { Worker } from 'node:worker_threads';

/**
 * fdatasync on threads of the spool's own that keep syncing while there is something to sync.
 * Through the thread pool every batch pays a dispatch and a wake-up on the receiver's thread, and
 * on a busy machine the woken pool thread often takes the receiver's core. Here the receiver only
 * publishes "written up to batch N" in shared memory; an idle thread claims every batch written so
 * far and syncs once for all of them, and sleeps only when nothing is left to claim.
 */
export interface SyncThread {
  /**
   * Calls `done` once a sync of the file at `path` that started after this call has ended (or
   * failed). Every earlier request must have been answered before `path` changes (a rotation).
   */
  datasync(path: string, done: (err: Error | null) => void): void;
  /**
   * Answers at once every request whose sync has ended (one read of shared memory), without
   * waiting for the thread's message: a receiver busy with other deliveries reaches that message
   * only on a later turn of its event loop, on a loaded machine milliseconds later
   * (bench/results/notes.md, "the receiver's throughput ratio"). Failures still come by message.
   */
  collect(): void;
  /**
   * The caller will call `collectBeforeWait()` before its thread next waits for I/O (it has
   * scheduled that call): a sync that ends before then posts no message, which would only reach a
   * receiver that is about to look anyway.
   */
  expectCollect(): void;
  /** Withdraws `expectCollect()`, then `collect()`: a sync that ends from now on posts its message. */
  collectBeforeWait(): void;
  /** Its counts so far (`SyncThreadStats`). */
  stats(): SyncThreadStats;
  /** Syncs running now. */
  running(): number;
  /** Threads asleep now, waiting for a request. */
  asleep(): number;
  /** Ends the threads once every requested sync has been answered. */
  close(): Promise<void>;
}

/** `SyncThread.stats()`. */
export interface SyncThreadStats {
  /** fdatasync calls (each covers every batch requested before it started). */
  syncs: number;
  /** Times a request woke a sleeping thread (a cost of the caller's thread: see LOOP). */
  syncWakeups: number;
  /** Syncs that posted no message, because the receiver was about to collect. */
  silentSyncs: number;
}

// Slots of the shared state (Int32): the batch number last requested, the threads asleep, the
// stop flag, the batch number the newest sync was claimed for, the file's generation, its path's
// length in bytes, a counter bumped by every request and by the stop, which is what a sleeping
// thread waits on, the highest batch number a sync has succeeded for, the threads in a sync now,
// when the newest sync started (the low 32 bits of Date.now()), a delay added to every sync
// (tests: a slow disk), whether the receiver will collect before it waits (expectCollect), the
// syncs made and those that posted no message; the path itself follows. Batch numbers only grow;
// 2^31 batches is far beyond a receiver's life.
const REQUESTED = 0;
const SLEEPERS = 1;
const STOP = 2;
const CLAIMED = 3;
const GENERATION = 4;
const PATH_LENGTH = 5;
const WAKE = 6;
const SYNCED = 7;
const SYNCING = 8;
const SYNC_STARTED = 9;
const SYNC_DELAY = 10;
const COLLECT_EXPECTED = 11;
const SYNCS = 12;
const SILENT = 13;
const PATH_AT = 16 * Int32Array.BYTES_PER_ELEMENT;

/**
 * A batch written while a sync has run this long wakes another thread for a sync of its own (a
 * slow disk); written earlier in a sync, it waits for that sync's thread to claim it.
 */
export const SECOND_SYNC_AFTER_MS = 2;
const MAX_PATH_BYTES = 4096;

/**
 * The threads' loop, as CommonJS source (an eval worker runs the same under tsx and compiled).
 * A thread claims every batch requested so far (compare-and-swap, so two threads never sync for
 * the same claim), syncs, and answers with [batch] or [batch, code, message] when the sync failed.
 * Each sync covers every batch written before it started, so an answer for batch N also answers
 * every batch before N.
 *
 * The receiver wakes a sleeping thread only when no sync is running, or when the running one has
 * taken SECOND_SYNC_AFTER_MS already (a slow disk: the batch gets a sync of its own at once). Else
 * the running sync's thread claims the batch as soon as that sync ends. Waking a thread cost the
 * receiver's thread about 37 us (bench/results/notes.md, "the receiver's wake-ups"), and with
 * two threads one was always asleep, so every batch paid it.
 *
 * Each thread syncs through a descriptor of its own, opened by path: Linux reports a writeback
 * error to one fsync per open file description, so threads sharing the receiver's descriptor could
 * each miss an error the other took, and acknowledge pages that never reached the disk.
 */
const LOOP = `
const { workerData, parentPort } = require('node:worker_threads');
const { closeSync, fdatasyncSync, openSync } = require('node:fs');
const state = new Int32Array(workerData);
const pathBytes = new Uint8Array(workerData, ${PATH_AT}, ${MAX_PATH_BYTES});
let fd = -1;
let generation = 0;
const descriptor = () => {
  const current = Atomics.load(state, ${GENERATION});
  if (current !== generation || fd < 0) {
    if (fd >= 0) closeSync(fd);
    fd = -1;
    generation = current;
    const path = Buffer.from(pathBytes.slice(0, Atomics.load(state, ${PATH_LENGTH}))).toString('utf8');
    fd = openSync(path, 'r+');
  }
  return fd;
};
for (;;) {
  const claimed = Atomics.load(state, ${CLAIMED});
  const target = Atomics.load(state, ${REQUESTED});
  if (target === claimed) {
    if (Atomics.load(state, ${STOP}) === 1) break;
    // Read the counter before the last checks: a request or the stop that lands after them bumps
    // it, so the wait returns at once or is woken. (Waiting on REQUESTED, a stop between the checks
    // and the wait was never seen, and close() could wait forever.)
    const wake = Atomics.load(state, ${WAKE});
    Atomics.add(state, ${SLEEPERS}, 1);
    if (Atomics.load(state, ${REQUESTED}) === target && Atomics.load(state, ${STOP}) === 0) Atomics.wait(state, ${WAKE}, wake);
    Atomics.sub(state, ${SLEEPERS}, 1);
    continue;
  }
  if (Atomics.compareExchange(state, ${CLAIMED}, claimed, target) !== claimed) continue;
  // Counted down before this thread looks for more to claim: a request the receiver did not wake
  // anyone for, having seen this sync running, is then seen by this thread.
  Atomics.store(state, ${SYNC_STARTED}, Date.now() | 0);
  Atomics.add(state, ${SYNCING}, 1);
  try {
    fdatasyncSync(descriptor());
    const delay = Atomics.load(state, ${SYNC_DELAY});
    if (delay > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delay);
    // Counted before it is published: a receiver that sees the sync also sees it counted.
    Atomics.add(state, ${SYNCS}, 1);
    // The other thread may have published a later batch already: SYNCED only grows.
    for (let done = Atomics.load(state, ${SYNCED}); done < target; done = Atomics.load(state, ${SYNCED})) {
      if (Atomics.compareExchange(state, ${SYNCED}, done, target) === done) break;
    }
    // SYNCED is stored before this load, and the receiver withdraws its promise before it reads
    // SYNCED: either its collect sees this sync, or this thread sees the promise withdrawn.
    if (Atomics.load(state, ${COLLECT_EXPECTED}) === 1) Atomics.add(state, ${SILENT}, 1);
    else parentPort.postMessage([target]);
  } catch (err) {
    Atomics.add(state, ${SYNCS}, 1);
    parentPort.postMessage([target, String(err && err.code), String(err && err.message)]);
  } finally {
    Atomics.sub(state, ${SYNCING}, 1);
  }
}
if (fd >= 0) closeSync(fd);
`;

/**
 * Two: a batch written while one sync runs starts its own sync on the other thread instead of
 * waiting for that sync to end, which shortens the wait for the acknowledgement when syncs are
 * slow (a busy disk). Safe because each thread syncs through a descriptor of its own. Figures:
 * bench/results/webhooks-h17-two-threads.json and bench/results/notes.md ("spool sync threads").
 */
export const DEFAULT_SYNC_THREADS = 2;

export interface SyncThreadOptions {
  /** Tests: every sync takes at least this much longer, as on a slow disk (default 0). */
  syncDelayMs?: number;
  /** How long a sync runs before a batch written meanwhile wakes another thread (default SECOND_SYNC_AFTER_MS). */
  secondSyncAfterMs?: number;
}

export function startSyncThread(threads = DEFAULT_SYNC_THREADS, options: SyncThreadOptions = {}): SyncThread {
  const shared = new SharedArrayBuffer(PATH_AT + MAX_PATH_BYTES);
  const state = new Int32Array(shared, 0, PATH_AT / Int32Array.BYTES_PER_ELEMENT);
  Atomics.store(state, SYNC_DELAY, Math.max(0, Math.round(options.syncDelayMs ?? 0)));
  const pathBytes = new Uint8Array(shared, PATH_AT, MAX_PATH_BYTES);
  const workers = Array.from({ length: Math.max(1, threads) }, () => new Worker(LOOP, { eval: true, workerData: shared }));
  // A receiver with nothing to sync must be able to exit; a request in flight keeps it alive.
  let referenced = true;
  const ref = (on: boolean): void => {
    if (on === referenced) return;
    referenced = on;
    for (const w of workers)
      if (on) w.ref();
      else w.unref();
  };
  ref(false);
  const waiting: { batch: number; done: (err: Error | null) => void }[] = [];
  let requested = 0;
  let path: string | undefined;
  let failed: Error | undefined;
  let wakeups = 0;
  const secondSyncAfterMs = options.secondSyncAfterMs ?? SECOND_SYNC_AFTER_MS;
  // Milliseconds since the newest sync started (32-bit arithmetic, as the threads store it).
  const runningFor = (): number => ((Date.now() | 0) - Atomics.load(state, SYNC_STARTED)) | 0;
  let closing = false;

  // Answers may arrive out of order (a later claim's sync can end first): an answer for a batch
  // already answered is a sync that is no longer needed. Once closing, the threads stay referenced
  // until they exit: the first thread's exit must not let the process end (and close() never
  // resolve) while the other is still stopping.
  const answer = (upTo: number, err: Error | null): void => {
    while (waiting.length > 0 && waiting[0]!.batch <= upTo) waiting.shift()!.done(err);
    if (waiting.length === 0 && !closing) ref(false);
  };
  const exits = workers.map((worker) => {
    worker.on('message', (m: [number] | [number, string, string]) => {
      const err = m.length === 3 ? Object.assign(new Error(m[2]), { code: m[1] }) : null;
      answer(m[0], err);
    });
    worker.on('error', (err) => {
      failed ??= err;
      answer(Infinity, err);
    });
    return new Promise<void>((resolve) =>
      worker.once('exit', () => {
        failed ??= new Error('the spool sync thread stopped');
        answer(Infinity, failed);
        resolve();
      }),
    );
  });

  const collect = (): void => {
    if (waiting.length === 0 || failed) return;
    const synced = Atomics.load(state, SYNCED);
    if (waiting[0]!.batch <= synced) answer(synced, null);
  };

  return {
    datasync(target, done) {
      if (failed) {
        done(failed);
        return;
      }
      if (target !== path) {
        // Another file (a rotation): the threads open it at their next claim.
        if (waiting.length > 0) throw new Error('sync thread: the file changed while syncs of the previous one were still running');
        const bytes = Buffer.from(target, 'utf8');
        if (bytes.length > MAX_PATH_BYTES) {
          done(new Error(`The spool path is longer than ${MAX_PATH_BYTES} bytes; use a shorter spool directory.`));
          return;
        }
        path = target;
        pathBytes.set(bytes);
        Atomics.store(state, PATH_LENGTH, bytes.length);
        Atomics.add(state, GENERATION, 1);
      }
      waiting.push({ batch: ++requested, done });
      ref(true);
      Atomics.store(state, REQUESTED, requested);
      Atomics.add(state, WAKE, 1);
      // A running sync's thread claims this batch when that sync ends (SYNCING is counted down
      // before it looks): a thread is woken when none runs, or when the running one is slow.
      if (Atomics.load(state, SLEEPERS) > 0 && (Atomics.load(state, SYNCING) === 0 || runningFor() >= secondSyncAfterMs)) {
        wakeups++;
        Atomics.notify(state, WAKE, 1);
      }
    },
    collect,
    expectCollect() {
      Atomics.store(state, COLLECT_EXPECTED, 1);
    },
    collectBeforeWait() {
      Atomics.store(state, COLLECT_EXPECTED, 0);
      collect();
    },
    stats: () => ({ syncs: Atomics.load(state, SYNCS), syncWakeups: wakeups, silentSyncs: Atomics.load(state, SILENT) }),
    running: () => Atomics.load(state, SYNCING),
    asleep: () => Atomics.load(state, SLEEPERS),
    async close() {
      closing = true;
      Atomics.store(state, STOP, 1);
      Atomics.add(state, WAKE, 1);
      Atomics.notify(state, WAKE);
      ref(true);
      await Promise.all(exits);
    },
  };
}
