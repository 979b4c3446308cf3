import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSyncThread, type SyncThread, type SyncThreadOptions } from '../../src/webhooks/sync-thread.js';
import { SpoolUnavailableError } from '../../src/webhooks/errors.js';
import { withSpool, type Spool } from '../../src/webhooks/spool.js';
import { withTempDir } from './helpers.js';

const sync = (thread: ReturnType<typeof startSyncThread>, path: string): Promise<Error | null> => new Promise((resolve) => thread.datasync(path, resolve));

describe('the spool sync thread', () => {
  it.each([1, 2])('answers every request in order with %i thread(s), one fdatasync covering the requests made while another ran', async (threads) => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'seg');
      const fd = openSync(path, 'w');
      const thread = startSyncThread(threads);
      try {
        const order: number[] = [];
        const all = Array.from({ length: 50 }, (_, i) => {
          writeSync(fd, Buffer.from(`${i}\n`));
          return new Promise<Error | null>((resolve) =>
            thread.datasync(path, (err) => {
              order.push(i);
              resolve(err);
            }),
          );
        });
        expect(await Promise.all(all)).toEqual(Array.from({ length: 50 }, () => null));
        expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
        // Requested microseconds apart, faster than the thread wakes up: a sync per request would be 50.
        expect(thread.stats().syncs).toBeGreaterThan(0);
        expect(thread.stats().syncs).toBeLessThan(50);
        expect(readFileSync(join(dir, 'seg'), 'utf8').split('\n')).toHaveLength(51);
      } finally {
        await thread.close();
        closeSync(fd);
      }
    });
  });

  it('fails a sync of a file it cannot open with its code, and goes on syncing the next file', async () => {
    await withTempDir(async (dir) => {
      const thread = startSyncThread();
      const path = join(dir, 'seg');
      closeSync(openSync(path, 'w'));
      try {
        const err = await sync(thread, join(dir, 'missing'));
        expect(err).toBeInstanceOf(Error);
        expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
        expect(await sync(thread, path)).toBeNull();
      } finally {
        await thread.close();
      }
    });
  });

  it.each([1, 2])("syncs through descriptors of its own, opened by path (%i thread(s)), never the writer's", async (threads) => {
    await withTempDir(async (dir) => {
      // Linux reports a writeback error to one fsync per open file description: a thread that
      // synced through the writer's descriptor could lose an error to another sync of it.
      const path = join(dir, 'seg');
      const thread = startSyncThread(threads);
      try {
        const fd = openSync(path, 'w');
        writeSync(fd, Buffer.from('frame\n'));
        closeSync(fd);
        expect(await sync(thread, path)).toBeNull();
        const mine = readdirSync('/proc/self/fd').filter((n) => {
          try {
            return readlinkSync(`/proc/self/fd/${n}`) === path;
          } catch {
            return false; // closed meanwhile
          }
        });
        expect(mine.length).toBeGreaterThanOrEqual(1);
      } finally {
        await thread.close();
      }
    });
  });

  it('lets a closed spool end its thread: the process has nothing left to wait for', async () => {
    await withTempDir(async (dir) => {
      const thread = startSyncThread();
      await thread.close();
      const path = join(dir, 'seg');
      closeSync(openSync(path, 'w'));
      const err = await sync(thread, path);
      expect(err?.message).toMatch(/sync thread stopped/);
    });
  });

  it('keeps a process alive until its spool has closed: close() resolves with nothing else to wait for', async () => {
    // In a process of its own: here the test runner keeps the event loop alive whatever the threads
    // do. The first thread to stop used to unreference the other, so the process could end with
    // close() still pending (one close in three or so); twenty closes in a row must all finish.
    await withTempDir(async (dir) => {
      const script = `
        const { openSpool } = await import(${JSON.stringify(join(import.meta.dirname, '../../src/webhooks/spool.ts'))});
        let closed = 0;
        for (let i = 0; i < 20; i++) {
          const spool = await openSpool({ dir: ${JSON.stringify(dir)} + '/' + i });
          await spool.append({ deliveryId: 'd' + i, webhookId: 1, event: 'contact.updated', known: true, receivedAt: 1, body: Buffer.from('{}') });
          await spool.close();
          closed++;
        }
        process.stdout.write('closed ' + closed);
      `;
      const { stdout, code } = await new Promise<{ stdout: string; code: number | null }>((resolve) => {
        const file = join(dir, 'close-twenty.mts');
        writeFileSync(file, script);
        const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.once('exit', (c) => resolve({ stdout: out, code: c }));
      });
      expect(stdout).toBe('closed 20');
      expect(code).toBe(0);
    });
  }, 60_000);

  it.each([1, 2])('fails a batch whose sync failed on a thread (%i thread(s)) instead of acknowledging it, and stores the retry', async (threads) => {
    await withTempDir(async (dir) => {
      const append = (spool: Spool, id: string): Promise<string> =>
        spool.append({ deliveryId: id, webhookId: 1, event: 'contact.updated', known: true, receivedAt: Date.now(), body: Buffer.from(`{"id":"${id}"}`) });
      await withSpool({ dir, syncThreads: threads }, async (spool) => {
        // The threads open the segment by path at their first sync: moved away, it cannot be
        // synced, which stands in for an fdatasync error (both come back from the thread alike).
        const seg = join(
          dir,
          readdirSync(dir).find((n) => n.startsWith('segment-'))!,
        );
        renameSync(seg, join(dir, 'moved'));
        await expect(append(spool, 'a')).rejects.toBeInstanceOf(SpoolUnavailableError);
        await expect(append(spool, 'b')).rejects.toBeInstanceOf(SpoolUnavailableError);
        expect(spool.stats().committedSeq).toBe(0);
        renameSync(join(dir, 'moved'), seg);
        expect(await append(spool, 'b')).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['b']);
      });
    });
  });

  it('is where the spool syncs by default', async () => {
    await withTempDir(async (dir) => {
      await withSpool({ dir }, async (spool) => {
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) => spool.append({ deliveryId: `d${i}`, webhookId: 1, event: 'contact.updated', known: true, receivedAt: Date.now(), body: Buffer.from(`{"i":${i}}`) })),
        );
        expect(outcomes).toEqual(Array.from({ length: 20 }, () => 'accepted'));
        expect((await spool.read(0, 100)).map((r) => r.deliveryId)).toEqual(Array.from({ length: 20 }, (_, i) => `d${i}`));
      });
    });
  });

  /** A file with one line written, and the default sync threads; both closed after `body`. */
  const withLineWritten = async (body: (thread: SyncThread, path: string, fd: number) => Promise<void>): Promise<void> => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'seg');
      const fd = openSync(path, 'w');
      const thread = startSyncThread();
      try {
        writeSync(fd, Buffer.from('a\n'));
        await body(thread, path, fd);
      } finally {
        await thread.close();
        closeSync(fd);
      }
    });
  };

  it('answers a request whose sync has ended through collect(), while its caller never yields to the event loop', async () => {
    await withLineWritten(async (thread, path) => {
      let answered: Error | null | undefined;
      thread.datasync(path, (err) => (answered = err));
      // A busy receiver: the thread's message cannot be handled until this loop returns.
      const pause = new Int32Array(new SharedArrayBuffer(4));
      const deadline = Date.now() + 10_000;
      while (answered === undefined && Date.now() < deadline) {
        Atomics.wait(pause, 0, 0, 1);
        thread.collect();
      }
      expect(answered).toBeNull();
      expect(thread.stats().syncs).toBe(1);
    });
  });

  it('posts no message for a sync that ends while the receiver has promised to collect, and answers it at that collect', async () => {
    await withLineWritten(async (thread, path, fd) => {
      thread.expectCollect();
      let answered: Error | null | undefined;
      thread.datasync(path, (err) => (answered = err));
      const deadline = Date.now() + 10_000;
      while (thread.stats().syncs === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      // A message would have been handled in these turns of the event loop.
      await new Promise((r) => setTimeout(r, 50));
      expect(answered).toBeUndefined();
      expect(thread.stats().silentSyncs).toBe(1);
      thread.collectBeforeWait();
      expect(answered).toBeNull();
      // The promise is withdrawn: the next sync is answered by its message, with no collect.
      writeSync(fd, Buffer.from('b\n'));
      expect(await sync(thread, path)).toBeNull();
      expect(thread.stats().silentSyncs).toBe(1);
      expect(thread.stats().syncs).toBe(2);
    });
  });
});

describe('the spool sync threads wake-ups', () => {
  const until = async (what: string, check: () => boolean): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 1));
    }
  };
  type Request = (line: string) => Promise<Error | null>;
  /** Two threads on a slow disk, both asleep; `request` writes a line and asks for its sync. */
  const withThreads = async (options: SyncThreadOptions, body: (thread: SyncThread, request: Request) => Promise<void>): Promise<void> => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'seg');
      const fd = openSync(path, 'w');
      const thread = startSyncThread(2, options);
      try {
        await until('both threads asleep', () => thread.asleep() === 2);
        await body(thread, (line) => {
          writeSync(fd, Buffer.from(`${line}\n`));
          return new Promise((resolve) => thread.datasync(path, resolve));
        });
      } finally {
        await thread.close();
        closeSync(fd);
      }
    });
  };

  it('wakes no thread for batches written while a sync runs: that sync’s thread claims them all when it ends', async () => {
    // A second sync never called for.
    await withThreads({ syncDelayMs: 300, secondSyncAfterMs: 60_000 }, async (thread, request) => {
      const first = request('first');
      await until('the first sync', () => thread.running() === 1);
      const woken = thread.stats().syncWakeups;
      const later = Array.from({ length: 9 }, (_, i) => request(`later ${i}`));
      // Each of these woke the idle thread before: a cost of the receiver's thread per batch.
      expect(thread.stats().syncWakeups).toBe(woken);
      expect(await Promise.all([first, ...later])).toEqual(Array.from({ length: 10 }, () => null));
      expect(woken).toBe(1);
      expect(thread.stats().syncs).toBe(2);
    });
  });

  it('wakes the other thread for a batch written once a sync has run long: the two syncs run at once', async () => {
    await withThreads({ syncDelayMs: 1_000, secondSyncAfterMs: 20 }, async (thread, request) => {
      const first = request('first');
      await until('the first sync', () => thread.running() === 1);
      await new Promise((r) => setTimeout(r, 40));
      const woken = thread.stats().syncWakeups;
      const second = request('second');
      expect(thread.stats().syncWakeups).toBe(woken + 1);
      await until('a second sync beside the first', () => thread.running() === 2);
      expect(await Promise.all([first, second])).toEqual([null, null]);
      expect(thread.stats().syncs).toBe(2);
    });
  });
});
