import type { WriteJobs } from '../../src/sync/warehouse-port.js';

/**
 * Keeps the warehouse owner busy with a job of its own. `began` settles once the job runs (the
 * owner may still be finishing another, e.g. a checkpoint on a busy machine); `release` waits for
 * that, ends the job and waits for it: a release before the job began would leave it held for good.
 */
export function holdOwner(writes: WriteJobs): { began: Promise<void>; release(): Promise<void> } {
  let end = (): void => undefined;
  let start = (): void => undefined;
  const began = new Promise<void>((s) => (start = s));
  const held = writes.run(
    () =>
      new Promise<void>((r) => {
        end = r;
        start();
      }),
  );
  return {
    began,
    async release() {
      await began;
      end();
      await held;
    },
  };
}
