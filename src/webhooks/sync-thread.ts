import { Worker } from 'node:worker_threads';

/**
 * fdatasync on threads of the spool's own that keep syncing while there is something to sync.
 * Through the thread pool every batch pays a dispatch and a wake-up on the receiver's thread, and
 * on a busy machine the woken pool thread often takes the receiver's core. Here the receiver only
 * publishes "written up to batch N" in shared memory; an idle thread claims every batch written so
 * far and syncs once for all of them, and sleeps only when nothing is left to claim.
 */
export interface SyncThread {
  /** Calls `done` once a sync that started after this call has ended (or failed) for `fd`. */
  datasync(fd: number, done: (err: Error | null) => void): void;
  /** fdatasync calls made so far (each covers every batch requested before it started). */
  syncs(): number;
  /** Ends the threads once every requested sync has been answered. */
  close(): Promise<void>;
}

// Slots of the shared state (Int32): the batch number last requested, the fd to sync, the threads
// asleep, the stop flag, and the batch number the newest sync was claimed for. Batch numbers only
// grow; 2^31 batches is far beyond a receiver's life.
const REQUESTED = 0;
const FD = 1;
const SLEEPERS = 2;
const STOP = 3;
const CLAIMED = 4;

/**
 * The threads' loop, as CommonJS source (an eval worker runs the same under tsx and compiled).
 * A thread claims every batch requested so far (compare-and-swap, so two threads never sync for
 * the same claim), syncs, and answers with [batch] or [batch, code, message] when the sync failed.
 * With two threads, a batch written while one sync runs starts its own sync at once instead of
 * waiting for that one to end; each sync covers every batch written before it started, so an
 * answer for batch N also answers every batch before N.
 */
const LOOP = `
const { workerData, parentPort } = require('node:worker_threads');
const { fdatasyncSync } = require('node:fs');
const state = new Int32Array(workerData);
for (;;) {
  const claimed = Atomics.load(state, ${CLAIMED});
  const target = Atomics.load(state, ${REQUESTED});
  if (target === claimed) {
    if (Atomics.load(state, ${STOP}) === 1) break;
    Atomics.add(state, ${SLEEPERS}, 1);
    if (Atomics.load(state, ${REQUESTED}) === target && Atomics.load(state, ${STOP}) === 0) Atomics.wait(state, ${REQUESTED}, target);
    Atomics.sub(state, ${SLEEPERS}, 1);
    continue;
  }
  if (Atomics.compareExchange(state, ${CLAIMED}, claimed, target) !== claimed) continue;
  try {
    fdatasyncSync(Atomics.load(state, ${FD}));
    parentPort.postMessage([target]);
  } catch (err) {
    parentPort.postMessage([target, String(err && err.code), String(err && err.message)]);
  }
}
`;

/**
 * One thread. A second lets a new batch's sync overlap the one running, but the threads share one
 * open file, and Linux reports a writeback error to only one fsync per open file: an older sync
 * could take the error for pages a newer, successful sync then acknowledges. More than one thread
 * needs a descriptor of its own per thread (each `open` sees every error); until then, only
 * benchmarks ask for more.
 */
export const DEFAULT_SYNC_THREADS = 1;

export function startSyncThread(threads = DEFAULT_SYNC_THREADS): SyncThread {
  const shared = new SharedArrayBuffer(5 * Int32Array.BYTES_PER_ELEMENT);
  const state = new Int32Array(shared);
  const workers = Array.from({ length: Math.max(1, threads) }, () => new Worker(LOOP, { eval: true, workerData: shared }));
  // A receiver with nothing to sync must be able to exit; a request in flight keeps it alive.
  const ref = (on: boolean): void => {
    for (const w of workers)
      if (on) w.ref();
      else w.unref();
  };
  ref(false);
  const waiting: { batch: number; done: (err: Error | null) => void }[] = [];
  let requested = 0;
  let fd = -1;
  let failed: Error | undefined;
  let syncs = 0;

  // Answers may arrive out of order (a later claim's sync can end first): an answer for a batch
  // already answered is a sync that is no longer needed.
  const answer = (upTo: number, err: Error | null): void => {
    while (waiting.length > 0 && waiting[0]!.batch <= upTo) waiting.shift()!.done(err);
    if (waiting.length === 0) ref(false);
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
      // A batch of another file (after a rotation, once every sync of the old one has ended).
      if (target !== fd) {
        fd = target;
        Atomics.store(state, FD, fd);
      }
      waiting.push({ batch: ++requested, done });
      ref(true);
      Atomics.store(state, REQUESTED, requested);
      if (Atomics.load(state, SLEEPERS) > 0) Atomics.notify(state, REQUESTED, 1);
    },
    syncs: () => syncs,
    async close() {
      Atomics.store(state, STOP, 1);
      Atomics.notify(state, REQUESTED);
      ref(true);
      await Promise.all(exits);
    },
  };
}
