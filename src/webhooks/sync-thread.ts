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
  /** fdatasync calls made so far (each covers every batch requested before it started). */
  syncs(): number;
  /** Ends the threads once every requested sync has been answered. */
  close(): Promise<void>;
}

// Slots of the shared state (Int32): the batch number last requested, the threads asleep, the
// stop flag, the batch number the newest sync was claimed for, the file's generation, its path's
// length in bytes, a counter bumped by every request and by the stop, which is what a sleeping
// thread waits on, and the highest batch number a sync has succeeded for; the path itself
// follows. Batch numbers only grow; 2^31 batches is far beyond a receiver's life.
const REQUESTED = 0;
const SLEEPERS = 1;
const STOP = 2;
const CLAIMED = 3;
const GENERATION = 4;
const PATH_LENGTH = 5;
const WAKE = 6;
const SYNCED = 7;
const PATH_AT = 8 * Int32Array.BYTES_PER_ELEMENT;
const MAX_PATH_BYTES = 4096;

/**
 * The threads' loop, as CommonJS source (an eval worker runs the same under tsx and compiled).
 * A thread claims every batch requested so far (compare-and-swap, so two threads never sync for
 * the same claim), syncs, and answers with [batch] or [batch, code, message] when the sync failed.
 * With two threads, a batch written while one sync runs starts its own sync at once instead of
 * waiting for that one to end; each sync covers every batch written before it started, so an
 * answer for batch N also answers every batch before N.
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
  try {
    fdatasyncSync(descriptor());
    // The other thread may have published a later batch already: SYNCED only grows.
    for (let done = Atomics.load(state, ${SYNCED}); done < target; done = Atomics.load(state, ${SYNCED})) {
      if (Atomics.compareExchange(state, ${SYNCED}, done, target) === done) break;
    }
    parentPort.postMessage([target]);
  } catch (err) {
    parentPort.postMessage([target, String(err && err.code), String(err && err.message)]);
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

export function startSyncThread(threads = DEFAULT_SYNC_THREADS): SyncThread {
  const shared = new SharedArrayBuffer(PATH_AT + MAX_PATH_BYTES);
  const state = new Int32Array(shared, 0, PATH_AT / Int32Array.BYTES_PER_ELEMENT);
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
  let syncs = 0;
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
      syncs++;
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
      if (Atomics.load(state, SLEEPERS) > 0) Atomics.notify(state, WAKE, 1);
    },
    collect() {
      if (waiting.length === 0 || failed) return;
      const synced = Atomics.load(state, SYNCED);
      if (waiting[0]!.batch <= synced) answer(synced, null);
    },
    syncs: () => syncs,
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
