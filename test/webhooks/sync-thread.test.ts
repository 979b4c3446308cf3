import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSyncThread } from '../../src/webhooks/sync-thread.js';
import { withSpool } from '../../src/webhooks/spool.js';
import { withTempDir } from './helpers.js';

const sync = (thread: ReturnType<typeof startSyncThread>, fd: number): Promise<Error | null> => new Promise((resolve) => thread.datasync(fd, resolve));

describe('the spool sync thread', () => {
  it.each([1, 2])('answers every request in order with %i thread(s), one fdatasync covering the requests made while another ran', async (threads) => {
    await withTempDir(async (dir) => {
      const fd = openSync(join(dir, 'seg'), 'w');
      const thread = startSyncThread(threads);
      try {
        const order: number[] = [];
        const all = Array.from({ length: 50 }, (_, i) => {
          writeSync(fd, Buffer.from(`${i}\n`));
          return new Promise<Error | null>((resolve) =>
            thread.datasync(fd, (err) => {
              order.push(i);
              resolve(err);
            }),
          );
        });
        expect(await Promise.all(all)).toEqual(Array.from({ length: 50 }, () => null));
        expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
        // Requested microseconds apart, faster than the thread wakes up: a sync per request would be 50.
        expect(thread.syncs()).toBeGreaterThan(0);
        expect(thread.syncs()).toBeLessThan(50);
        expect(readFileSync(join(dir, 'seg'), 'utf8').split('\n')).toHaveLength(51);
      } finally {
        await thread.close();
        closeSync(fd);
      }
    });
  });

  it('fails a sync of a bad descriptor with its code, and goes on syncing the next file', async () => {
    await withTempDir(async (dir) => {
      const thread = startSyncThread();
      const fd = openSync(join(dir, 'seg'), 'w');
      try {
        // Far above any descriptor limit: a just-closed descriptor could be reused by the
        // thread's own start-up (or another test in this process) before the sync runs.
        const err = await sync(thread, 2 ** 30);
        expect(err).toBeInstanceOf(Error);
        expect((err as NodeJS.ErrnoException).code).toBe('EBADF');
        expect(await sync(thread, fd)).toBeNull();
      } finally {
        await thread.close();
        closeSync(fd);
      }
    });
  });

  it('lets a closed spool end its thread: the process has nothing left to wait for', async () => {
    await withTempDir(async (dir) => {
      const thread = startSyncThread();
      await thread.close();
      const fd = openSync(join(dir, 'seg'), 'w');
      try {
        const err = await sync(thread, fd);
        expect(err?.message).toMatch(/sync thread stopped/);
      } finally {
        closeSync(fd);
      }
    });
  });

  it('is where the spool syncs by default, and the thread-pool path stores the same', async () => {
    for (const syncOn of [undefined, 'pool'] as const) {
      await withTempDir(async (dir) => {
        await withSpool({ dir, ...(syncOn ? { syncOn } : {}) }, async (spool) => {
          const outcomes = await Promise.all(
            Array.from({ length: 20 }, (_, i) => spool.append({ deliveryId: `d${i}`, webhookId: 1, event: 'contact.updated', known: true, receivedAt: Date.now(), body: Buffer.from(`{"i":${i}}`) })),
          );
          expect(outcomes).toEqual(Array.from({ length: 20 }, () => 'accepted'));
          expect((await spool.read(0, 100)).map((r) => r.deliveryId)).toEqual(Array.from({ length: 20 }, (_, i) => `d${i}`));
        });
      });
    }
  });
});
