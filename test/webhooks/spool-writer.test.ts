import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpoolUnavailableError } from '../../src/webhooks/errors.js';
import { withSpool } from '../../src/webhooks/spool.js';
import type { SpoolEntry } from '../../src/webhooks/spool-frame.js';
import { fileSpoolIo, type SpoolIo } from '../../src/webhooks/spool-io.js';
import { withTempDir } from './helpers.js';

const entry = (id: string): SpoolEntry => ({ deliveryId: id, webhookId: 1, event: 'contact.updated', known: true, receivedAt: Date.now(), body: Buffer.from(JSON.stringify({ id })) });

/** Real writes; syncs are held until the test releases them (with success or an error). */
function heldIo(): SpoolIo & { held: ((err: Error | null) => void)[]; writes: number; release(i: number, err?: Error): void } {
  const io = {
    held: [] as ((err: Error | null) => void)[],
    writes: 0,
    write(fd: number, buf: Buffer, position: number) {
      io.writes++;
      fileSpoolIo.write(fd, buf, position);
    },
    datasync(fd: number, done: (err: Error | null) => void) {
      io.held.push((err) => (err ? done(err) : fileSpoolIo.datasync(fd, done)));
    },
    release(i: number, err?: Error) {
      io.held[i]!(err ?? null);
    },
  };
  return io;
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setImmediate(r));
};

describe('spool writer', () => {
  it('answers an append only after the sync that covers it, and in log order (syncs pipelined)', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io, syncsInFlight: 4 }, async (spool) => {
        const a = spool.append(entry('a'));
        await until(() => io.held.length === 1);
        // Written (to the page cache) but not synced: not acknowledged, not readable, not deduplicated yet.
        expect(io.writes).toBe(1);
        expect(await settled(a)).toBe(false);
        expect(spool.stats().committedSeq).toBe(0);
        const b = spool.append(entry('b'));
        await until(() => io.held.length === 2);
        // The later batch's sync ends first: it still waits for the earlier one.
        io.release(1);
        expect(await settled(b)).toBe(false);
        io.release(0);
        expect(await a).toBe('accepted');
        expect(await b).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a', 'b']);
      });
    });
  });

  it('with one batch in flight, what arrives while its sync runs waits for it and goes into the next group commit together', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io, syncsInFlight: 1 }, async (spool) => {
        const a = spool.append(entry('a'));
        await until(() => io.held.length === 1);
        const b = spool.append(entry('b'));
        await new Promise((r) => setImmediate(r));
        const c = spool.append(entry('c'));
        // b and c are neither synced nor answered while a's sync runs.
        expect(await settled(b)).toBe(false);
        await new Promise((r) => setTimeout(r, 10));
        // Not even written: the write waits until a sync can start for it.
        expect(io.held.length).toBe(1);
        expect(io.writes).toBe(1);
        io.release(0);
        expect(await a).toBe('accepted');
        await until(() => io.held.length === 2);
        expect(io.writes).toBe(2); // one write and one sync for b and c together
        expect(await settled(c)).toBe(false);
        io.release(1);
        expect(await b).toBe('accepted');
        expect(await c).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a', 'b', 'c']);
      });
    });
  });

  it('never has more than syncsInFlight syncs running', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io, syncsInFlight: 2 }, async (spool) => {
        const appends = [spool.append(entry('a'))];
        await until(() => io.held.length === 1);
        appends.push(spool.append(entry('b')));
        await until(() => io.held.length === 2);
        appends.push(spool.append(entry('c')));
        await new Promise((r) => setTimeout(r, 10));
        expect(io.held.length).toBe(2);
        io.release(0);
        await until(() => io.held.length === 3);
        io.release(1);
        io.release(2);
        expect(await Promise.all(appends)).toEqual(['accepted', 'accepted', 'accepted']);
      });
    });
  });

  it('answers a concurrent copy of a delivery as a duplicate once the first is durable, and fails it with the first', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io }, async (spool) => {
        const first = spool.append(entry('x'));
        const copy = spool.append(entry('x'));
        await until(() => io.held.length === 1);
        expect(await settled(copy)).toBe(false);
        io.release(0, new Error('EIO'));
        await expect(first).rejects.toBeInstanceOf(SpoolUnavailableError);
        await expect(copy).rejects.toBeInstanceOf(SpoolUnavailableError);
        const retry = spool.append(entry('x'));
        const retryCopy = spool.append(entry('x'));
        await until(() => io.held.length === 2);
        io.release(1);
        expect([await retry, await retryCopy]).toEqual(['accepted', 'duplicate']);
        expect(await spool.append(entry('x'))).toBe('duplicate');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['x']);
      });
    });
  });

  it('groups the appends of one event-loop turn into one write and one sync', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io }, async (spool) => {
        const all = Array.from({ length: 20 }, (_, i) => spool.append(entry(`d-${i}`)));
        await until(() => io.held.length === 1);
        expect(io.writes).toBe(1);
        io.release(0);
        expect(new Set(await Promise.all(all))).toEqual(new Set(['accepted']));
        expect(spool.stats().batches).toBe(1);
      });
    });
  });

  it('refuses a batch whose sync failed, and the later one written after it, then cuts the file back (syncs pipelined)', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io, syncsInFlight: 4 }, async (spool) => {
        const a = spool.append(entry('a'));
        await until(() => io.held.length === 1);
        io.release(0);
        expect(await a).toBe('accepted');
        const b = spool.append(entry('b'));
        await until(() => io.held.length === 2);
        const c = spool.append(entry('c'));
        await until(() => io.held.length === 3);
        io.release(2);
        io.release(1, Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
        await expect(b).rejects.toBeInstanceOf(SpoolUnavailableError);
        await expect(c).rejects.toBeInstanceOf(SpoolUnavailableError);
        // Not seen: the CRM's retries are stored, after the cut-back.
        const retry = spool.append(entry('b'));
        await until(() => io.held.length === 4);
        io.release(3);
        expect(await retry).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a', 'b']);
      });
      const seg = readdirSync(dir).find((n) => n.startsWith('segment-'))!;
      // Only whole frames remain once closed (the preallocated tail is trimmed).
      expect(readFileSync(join(dir, seg)).includes(Buffer.from('"c"'))).toBe(false);
    });
  });

  it('fails a batch whose sync call throws (503), once, and stores the retry', async () => {
    await withTempDir(async (dir) => {
      let throwing = true;
      const io: SpoolIo = {
        write: fileSpoolIo.write,
        datasync(fd, done) {
          if (throwing) throw Object.assign(new Error('EBADF: bad file descriptor, fdatasync'), { code: 'EBADF' });
          fileSpoolIo.datasync(fd, done);
        },
      };
      await withSpool({ dir, io }, async (spool) => {
        await expect(spool.append(entry('a'))).rejects.toBeInstanceOf(SpoolUnavailableError);
        throwing = false;
        expect(await spool.append(entry('a'))).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a']);
      });
    });
  });

  it('preallocates the next step in the background once half of the current one is used, and trims it on close', async () => {
    await withTempDir(async (dir) => {
      // Bodies differ (the spool stores a body once, whatever delivery id it comes under).
      const bodyOf = (id: string): Buffer => {
        const b = Buffer.alloc(4000, 0x61);
        b.write(id);
        return b;
      };
      const big = (id: string): SpoolEntry => ({ ...entry(id), body: bodyOf(id) });
      const step = 4 * 1024 * 1024;
      await withSpool({ dir, maxSegmentBytes: 64 * 1024 * 1024 }, async (spool) => {
        const seg = join(dir, readdirSync(dir).find((n) => n.startsWith('segment-')) ?? '');
        // About 2.4 MiB: past half of the first 4 MiB step, so the second is prepared ahead.
        for (let i = 0; i < 600; i += 20) await Promise.all(Array.from({ length: 20 }, (_, j) => spool.append(big(`d-${i + j}`))));
        await until(() => statSync(seg).size >= 2 * step);
        expect(statSync(seg).size).toBe(2 * step);
        // Past the first step: frames go into the space prepared ahead.
        for (let i = 600; i < 1200; i += 20) await Promise.all(Array.from({ length: 20 }, (_, j) => spool.append(big(`d-${i + j}`))));
        const all = await spool.read(0, 2000);
        expect(all.map((r) => r.deliveryId)).toEqual(Array.from({ length: 1200 }, (_, i) => `d-${i}`));
        expect(all.every((r) => r.body.equals(bodyOf(r.deliveryId)))).toBe(true);
      });
      const seg = join(
        dir,
        readdirSync(dir).find((n) => n.startsWith('segment-'))!,
      );
      const size = statSync(seg).size;
      expect(size).toBeLessThan(2 * step);
      expect(
        readFileSync(seg)
          .subarray(size - 4000)
          .equals(bodyOf('d-1199')),
      ).toBe(true);
      await withSpool({ dir }, async (spool) => {
        expect((await spool.read(0, 2000)).length).toBe(1200);
        expect(await spool.append(big('d-0'))).toBe('duplicate');
      });
    });
  });
});
