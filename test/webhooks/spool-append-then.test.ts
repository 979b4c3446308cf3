import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SpoolUnavailableError } from '../../src/webhooks/errors.js';
import { withSpool, type AppendOutcome } from '../../src/webhooks/spool.js';
import type { SpoolEntry } from '../../src/webhooks/spool-frame.js';
import { fileSpoolIo, type SpoolIo } from '../../src/webhooks/spool-io.js';
import { withTempDir } from './helpers.js';

const entry = (id: string, body = `{"id":"${id}"}`): SpoolEntry => ({ deliveryId: id, webhookId: 1, event: 'contact.updated', known: true, receivedAt: Date.now(), body: Buffer.from(body) });

/** Real writes; each sync is held until the test releases it (with success or an error). */
function heldIo(): SpoolIo & { held: ((err: Error | null) => void)[] } {
  const io = {
    held: [] as ((err: Error | null) => void)[],
    write: (fd: number, buf: Buffer, position: number) => fileSpoolIo.write(fd, buf, position),
    datasync(fd: number, done: (err: Error | null) => void) {
      io.held.push((err) => (err ? done(err) : fileSpoolIo.datasync(fd, done)));
    },
  };
  return io;
}

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setImmediate(r));
};

type Answer = { id: string; err: Error | null; outcome: AppendOutcome | undefined };

// The receiver's path to the spool: callbacks, no promise (Spool.append wraps the same code).
describe('spool appendThen', () => {
  it('answers copies that come while an append is in flight only once it is durable: duplicate by id, replayed by body', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io }, async (spool) => {
        const answers: Answer[] = [];
        const record = (id: string) => (err: Error | null, outcome?: AppendOutcome) => answers.push({ id, err, outcome });
        spool.appendThen(entry('a'), record('a'));
        spool.appendThen(entry('a'), record('a again'));
        spool.appendThen(entry('b', '{"id":"a"}'), record('b, the body of a'));
        await until(() => io.held.length === 1);
        expect(answers).toEqual([]);
        io.held[0]!(null);
        await until(() => answers.length === 3);
        expect(answers).toEqual([
          { id: 'a', err: null, outcome: 'accepted' },
          { id: 'a again', err: null, outcome: 'duplicate' },
          { id: 'b, the body of a', err: null, outcome: 'replayed' },
        ]);
        // Known ones are answered at once, before the call returns.
        const now: Answer[] = [];
        spool.appendThen(entry('a'), (err, outcome) => now.push({ id: 'a', err, outcome }));
        expect(now).toEqual([{ id: 'a', err: null, outcome: 'duplicate' }]);
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a']);
      });
    });
  });

  it('fails the copies waiting on an append whose sync failed, and stores the retry', async () => {
    await withTempDir(async (dir) => {
      const io = heldIo();
      await withSpool({ dir, io }, async (spool) => {
        const answers: Answer[] = [];
        const record = (id: string) => (err: Error | null, outcome?: AppendOutcome) => answers.push({ id, err, outcome });
        spool.appendThen(entry('a'), record('a'));
        spool.appendThen(entry('a'), record('a again'));
        await until(() => io.held.length === 1);
        io.held[0]!(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
        await until(() => answers.length === 2);
        expect(answers.map((a) => [a.id, a.err instanceof SpoolUnavailableError, a.outcome])).toEqual([
          ['a', true, undefined],
          ['a again', true, undefined],
        ]);
        // Not "seen": the CRM's retry is stored.
        const retried = new Promise<AppendOutcome | undefined>((resolve, reject) => spool.appendThen(entry('a'), (err, outcome) => (err ? reject(err) : resolve(outcome))));
        await until(() => io.held.length === 2);
        io.held[1]!(null);
        expect(await retried).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a']);
      });
    });
  });

  it('still answers the rest of a batch when one callback throws, and logs it', async () => {
    await withTempDir(async (dir) => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
      const io = heldIo();
      await withSpool({ dir, io, logger }, async (spool) => {
        const answered: string[] = [];
        spool.appendThen(entry('a'), () => {
          answered.push('a');
          throw new Error('the socket went away');
        });
        spool.appendThen(entry('b'), (err, outcome) => answered.push(`b ${String(err)} ${outcome}`));
        await until(() => io.held.length === 1);
        io.held[0]!(null);
        await until(() => answered.length === 2);
        expect(answered).toEqual(['a', 'b null accepted']);
        expect(lines.join('')).toContain('an append callback threw');
        // The writer goes on: a later delivery is stored and answered.
        const later = spool.append(entry('c'));
        await until(() => io.held.length === 2);
        io.held[1]!(null);
        expect(await later).toBe('accepted');
      });
    });
  });

  it('prunes applied segments past the retention while an append is in flight, and still holds its copies back', async () => {
    await withTempDir(async (dir) => {
      // The entries' receive time is the real clock's; the spool's is this one, moved past the retention.
      let clock = Date.now();
      const io = heldIo();
      const release = async (n: number): Promise<void> => {
        await until(() => io.held.length === n);
        io.held[n - 1]!(null);
      };
      // Every frame is larger than a segment: each delivery gets a segment of its own.
      await withSpool({ dir, io, maxSegmentBytes: 10, retentionMs: 3600e3, now: () => clock }, async (spool) => {
        const a = spool.append(entry('a'));
        await release(1);
        expect(await a).toBe('accepted');
        const b = spool.append(entry('b'));
        await release(2);
        expect(await b).toBe('accepted');
        const answers: Answer[] = [];
        spool.appendThen(entry('x'), (err, outcome) => answers.push({ id: 'x', err, outcome }));
        await until(() => io.held.length === 3);
        // Both durable segments are applied and past the retention: they go, the append in flight stays known.
        clock += 2 * 3600e3;
        await spool.markApplied(2);
        expect(spool.stats().segments).toBe(1);
        spool.appendThen(entry('x'), (err, outcome) => answers.push({ id: 'x again', err, outcome }));
        spool.appendThen(entry('y', '{"id":"x"}'), (err, outcome) => answers.push({ id: 'y, the body of x', err, outcome }));
        expect(answers).toEqual([]);
        io.held[2]!(null);
        await until(() => answers.length === 3);
        expect(answers).toEqual([
          { id: 'x', err: null, outcome: 'accepted' },
          { id: 'x again', err: null, outcome: 'duplicate' },
          { id: 'y, the body of x', err: null, outcome: 'replayed' },
        ]);
        // The pruned ones are forgotten (past the retention), the durable one is not.
        const again = spool.append(entry('a'));
        await release(4);
        expect(await again).toBe('accepted');
        expect(await spool.append(entry('x'))).toBe('duplicate');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['x', 'a']);
      });
    });
  });

  it("answers a durable delivery from the next append, before the receiver's thread returns to its event loop", async () => {
    await withTempDir(async (dir) => {
      await withSpool({ dir }, async (spool) => {
        await spool.append(entry('first')); // the segment's first space is allocated
        const answers: Answer[] = [];
        spool.appendThen(entry('a'), (err, outcome) => answers.push({ id: 'a', err, outcome }));
        await new Promise((r) => setImmediate(r)); // its batch is written and its sync requested
        // A busy receiver: copies of 'a' keep coming and the sync thread's message is never handled.
        const pause = new Int32Array(new SharedArrayBuffer(4));
        const deadline = Date.now() + 10_000;
        while (answers.length === 0 && Date.now() < deadline) {
          Atomics.wait(pause, 0, 0, 1);
          spool.appendThen(entry('a'), () => undefined);
        }
        expect(answers).toEqual([{ id: 'a', err: null, outcome: 'accepted' }]);
        expect(spool.stats().committedSeq).toBe(2);
      });
    });
  });
});
