import { Worker } from 'node:worker_threads';

/**
 * fdatasync on a thread of its own that keeps syncing while there is something to sync. Through
 * the thread pool every batch pays a dispatch and a wake-up on the receiver's thread, and on a
 * busy machine the woken pool thread often takes the receiver's core: the receiver's thread, not
 * the disk, then limits the deliveries a second. Here the receiver only publishes "written up to
 * batch N" in shared memory; the sync thread, when a sync ends and more was written meanwhile,
 * starts the next one at once (one sync covers every batch written before it started), and is
 * woken only when it had gone to sleep with nothing to do.
 */
export interface SyncThread {
  /** Calls `done` once a sync that started after this call has ended (or failed) for `fd`. */
  datasync(fd: number, done: (err: Error | null) => void): void;
  /** fdatasync calls made so far (each covers every batch requested before it started). */
  syncs(): number;
  /** Ends the thread once every requested sync has been answered. */
  close(): Promise<void>;
}

// Slots of the shared state (Int32): the batch number last requested, the fd to sync, whether
// the thread sleeps. Batch numbers only grow; 2^31 batches is far beyond a receiver's life.
const REQUESTED = 0;
const FD = 1;
const SLEEPING = 2;
const STOP = 3;

/**
 * The thread's loop, as CommonJS source (an eval worker runs the same under tsx and compiled).
 * It answers with [batch] after a sync, or [batch, code, message] when the sync failed.
 */
const LOOP = `
const { workerData, parentPort } = require('node:worker_threads');
const { fdatasyncSync } = require('node:fs');
const state = new Int32Array(workerData);
let synced = 0;
for (;;) {
  const target = Atomics.load(state, ${REQUESTED});
  if (target === synced) {
    if (Atomics.load(state, ${STOP}) === 1) break;
    Atomics.store(state, ${SLEEPING}, 1);
    if (Atomics.load(state, ${REQUESTED}) === synced && Atomics.load(state, ${STOP}) === 0) Atomics.wait(state, ${REQUESTED}, synced);
    Atomics.store(state, ${SLEEPING}, 0);
    continue;
  }
  try {
    fdatasyncSync(Atomics.load(state, ${FD}));
    parentPort.postMessage([target]);
  } catch (err) {
    parentPort.postMessage([target, String(err && err.code), String(err && err.message)]);
  }
  synced = target;
}
`;

export function startSyncThread(): SyncThread {
  const shared = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
  const state = new Int32Array(shared);
  const worker = new Worker(LOOP, { eval: true, workerData: shared });
  // A receiver with nothing to sync must be able to exit; a request in flight keeps it alive.
  worker.unref();
  const waiting: { batch: number; done: (err: Error | null) => void }[] = [];
  let requested = 0;
  let fd = -1;
  let failed: Error | undefined;
  let syncs = 0;

  const answer = (upTo: number, err: Error | null): void => {
    while (waiting.length > 0 && waiting[0]!.batch <= upTo) waiting.shift()!.done(err);
    if (waiting.length === 0) worker.unref();
  };
  worker.on('message', (m: [number] | [number, string, string]) => {
    syncs++;
    const err = m.length === 3 ? Object.assign(new Error(m[2]), { code: m[1] }) : null;
    answer(m[0], err);
  });
  worker.on('error', (err) => {
    failed = err;
    answer(Infinity, err);
  });
  worker.on('exit', () => {
    failed ??= new Error('the spool sync thread stopped');
    answer(Infinity, failed);
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
      worker.ref();
      Atomics.store(state, REQUESTED, requested);
      if (Atomics.load(state, SLEEPING) === 1) Atomics.notify(state, REQUESTED);
    },
    syncs: () => syncs,
    async close() {
      Atomics.store(state, STOP, 1);
      Atomics.notify(state, REQUESTED);
      worker.ref();
      await new Promise<void>((resolve) => {
        if (failed) resolve();
        else worker.once('exit', () => resolve());
      });
    },
  };
}
