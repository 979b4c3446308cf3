import { appendFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SpoolUnavailableError } from '../../src/webhooks/errors.js';
import { openSpool, withSpool } from '../../src/webhooks/spool.js';
import type { SpoolEntry } from '../../src/webhooks/spool-frame.js';
import { withTempDir } from './helpers.js';

const entry = (id: string, receivedAt = Date.now()): SpoolEntry => ({
  deliveryId: id,
  webhookId: 1,
  event: 'contact.updated',
  known: true,
  receivedAt,
  body: Buffer.from(JSON.stringify({ id, pad: 'x'.repeat(100) })),
});

const segments = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('segment-'));

describe('spool', () => {
  it('commits concurrent appends in shared fsync batches and reads them back in order, byte for byte', async () => {
    await withTempDir(async (dir) => {
      await withSpool({ dir }, async (spool) => {
        const ids = Array.from({ length: 300 }, (_, i) => `d-${i}`);
        const outcomes = await Promise.all(ids.map((id) => spool.append(entry(id))));
        expect(new Set(outcomes)).toEqual(new Set(['accepted']));
        expect(spool.stats().batches).toBeLessThan(300);
        // Each sync covers every batch written before it started; a batch wakes a thread at most once.
        expect(spool.stats().syncs).toBeGreaterThan(0);
        expect(spool.stats().syncs).toBeLessThanOrEqual(spool.stats().batches);
        expect(spool.stats().syncWakeups).toBeLessThanOrEqual(spool.stats().batches);
        const all = await spool.read(0, 1000);
        expect(all.map((r) => r.deliveryId)).toEqual(ids);
        expect(all.map((r) => r.seq)).toEqual(ids.map((_, i) => i + 1));
        expect(JSON.parse(all[42]!.body.toString()).id).toBe('d-42');
        // Paging with the applier's offset.
        const page = await spool.read(100, 50);
        expect(page.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 101 + i));
        // A byte budget bounds a batch too (bodies here are ~120 bytes), but never below one record.
        const bodyLen = all[0]!.body.length;
        expect((await spool.read(0, 100, bodyLen * 2 + 1)).map((r) => r.seq)).toEqual([1, 2, 3]);
        expect((await spool.read(0, 100, 1)).map((r) => r.seq)).toEqual([1]);
        const next = await spool.read(150, 500);
        expect(next[0]!.seq).toBe(151);
        expect(next).toHaveLength(150);
      });
    });
  });

  it('reads and deduplicates frames written with the older JSON metadata, then appends after them', async () => {
    await withTempDir(async (dir) => {
      // The frame layout of spools written before the binary metadata: a receiver upgraded over a
      // spool that still holds unapplied deliveries must read them.
      const jsonFrame = (seq: number, e: SpoolEntry): Buffer => {
        const meta = Buffer.from(JSON.stringify({ s: seq, d: e.deliveryId, w: e.webhookId, e: e.event, k: e.known ? 1 : 0, t: e.receivedAt }));
        const payload = Buffer.concat([Buffer.alloc(4), meta, e.body]);
        payload.writeUInt32LE(meta.length, 0);
        const head = Buffer.alloc(8);
        head.writeUInt32LE(payload.length, 0);
        head.writeUInt32LE(crc32(payload), 4);
        return Buffer.concat([head, payload]);
      };
      const old = [entry('old-1', 1_000), { ...entry('old-2', 2_000), known: false, event: 'contact.merged', webhookId: 7 }];
      writeFileSync(join(dir, 'segment-000000000001.log'), Buffer.concat(old.map((e, i) => jsonFrame(i + 1, e))));
      await withSpool({ dir }, async (spool) => {
        expect(await spool.append(entry('old-1'))).toBe('duplicate');
        expect(await spool.append({ ...entry('again'), body: old[1]!.body })).toBe('replayed');
        expect(await spool.append(entry('new'))).toBe('accepted');
        const all = await spool.read(0, 10);
        expect(all.map(({ seq, deliveryId, webhookId, event, known, receivedAt }) => ({ seq, deliveryId, webhookId, event, known, receivedAt }))).toEqual([
          { seq: 1, deliveryId: 'old-1', webhookId: 1, event: 'contact.updated', known: true, receivedAt: 1_000 },
          { seq: 2, deliveryId: 'old-2', webhookId: 7, event: 'contact.merged', known: false, receivedAt: 2_000 },
          { seq: 3, deliveryId: 'new', webhookId: 1, event: 'contact.updated', known: true, receivedAt: all[2]!.receivedAt },
        ]);
        expect(all.map((r) => r.body.toString())).toEqual([old[0]!.body.toString(), old[1]!.body.toString(), entry('new').body.toString()]);
      });
      // And the binary frames written since read back alike after a restart.
      await withSpool({ dir }, async (spool) => {
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['old-1', 'old-2', 'new']);
        expect(await spool.append(entry('new'))).toBe('duplicate');
      });
    });
  });

  it('rebuilds the dedup index from the log when reopened, keeping its id; an emptied log gets a new id', async () => {
    await withTempDir(async (dir) => {
      const id = await withSpool({ dir }, async (spool) => {
        expect(await spool.append(entry('a'))).toBe('accepted');
        expect(await spool.append(entry('b'))).toBe('accepted');
        return spool.id;
      });
      await withSpool({ dir }, async (spool) => {
        expect(spool.id).toBe(id);
        expect(await spool.append(entry('a'))).toBe('duplicate');
        expect(await spool.append(entry('c'))).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => [r.seq, r.deliveryId])).toEqual([
          [1, 'a'],
          [2, 'b'],
          [3, 'c'],
        ]);
      });
      for (const seg of segments(dir)) rmSync(join(dir, seg));
      await withSpool({ dir }, async (spool) => {
        // Seqs restart at 1 under a new id, so the applier's old offset cannot hide them.
        expect(spool.id).not.toBe(id);
        expect(await spool.append(entry('x'))).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.seq)).toEqual([1]);
      });
    });
  });

  it('cuts off a torn frame at the tail (a crash mid-write) and keeps everything before it', async () => {
    await withTempDir(async (dir) => {
      await withSpool({ dir }, async (spool) => {
        await spool.append(entry('a'));
        await spool.append(entry('b'));
      });
      const seg = join(dir, segments(dir)[0]!);
      const size = statSync(seg).size;
      appendFileSync(seg, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5, 6]));
      await withSpool({ dir }, async (spool) => {
        expect(statSync(seg).size).toBe(size);
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a', 'b']);
        expect(await spool.append(entry('c'))).toBe('accepted');
        expect((await spool.read(2, 10)).map((r) => r.deliveryId)).toEqual(['c']);
      });
    });
  });

  it('rotates segments, and prunes only segments that are applied and older than the retention', async () => {
    await withTempDir(async (dir) => {
      let clock = Date.parse('2026-01-01T00:00:00Z');
      await withSpool({ dir, maxSegmentBytes: 1000, retentionMs: 7 * 24 * 3600e3, now: () => clock }, async (spool) => {
        for (let i = 0; i < 30; i++) await spool.append(entry(`d-${i}`, clock));
        const before = segments(dir).length;
        expect(before).toBeGreaterThan(3);
        expect((await spool.read(0, 100)).length).toBe(30);
        // Applied but within retention: kept, and still deduplicated.
        await spool.markApplied(10);
        expect(segments(dir).length).toBe(before);
        expect(await spool.append(entry('d-0', clock))).toBe('duplicate');
        // Past retention, only the applied part goes.
        clock += 8 * 24 * 3600e3;
        await spool.markApplied(10);
        const after = segments(dir).length;
        expect(after).toBeLessThan(before);
        expect((await spool.read(0, 100))[0]!.seq).toBeLessThanOrEqual(11);
        expect(await spool.append(entry('d-29', clock))).toBe('duplicate');
        expect(await spool.append(entry('d-0', clock))).toBe('accepted');
      });
    });
  });

  it('refuses deliveries with SpoolUnavailableError when a segment cannot be written, and recovers once it can', async () => {
    await withTempDir(async (dir) => {
      const spoolDir = join(dir, 'spool');
      const spool = await openSpool({ dir: spoolDir, maxSegmentBytes: 10 });
      try {
        expect(await spool.append(entry('a'))).toBe('accepted');
        // The next append must rotate, but the directory has gone.
        renameSync(spoolDir, join(dir, 'moved'));
        writeFileSync(spoolDir, 'not a directory');
        await expect(spool.append(entry('b'))).rejects.toBeInstanceOf(SpoolUnavailableError);
        // The failed delivery was not recorded as seen: its retry must not be called a duplicate.
        expect(spool.stats().indexedDeliveries).toBe(1);
        expect(spool.stats().healthy).toBe(true);
        // The disk is back: the CRM's retry is stored.
        rmSync(spoolDir);
        renameSync(join(dir, 'moved'), spoolDir);
        expect(await spool.append(entry('b'))).toBe('accepted');
        expect((await spool.read(0, 10)).map((r) => r.deliveryId)).toEqual(['a', 'b']);
      } finally {
        await spool.close().catch(() => undefined);
      }
    });
  });

  it('refuses a second receiver on the same spool directory, without touching the live segment', async () => {
    await withTempDir(async (dir) => {
      await withSpool({ dir }, async (spool) => {
        await spool.append(entry('live'));
        const seg = join(dir, segments(dir)[0]!);
        const size = statSync(seg).size;
        await expect(openSpool({ dir })).rejects.toThrow(/Another webhook receiver/);
        // The live file (with its preallocated tail) is left exactly as it was.
        expect(statSync(seg).size).toBe(size);
        expect(await spool.append(entry('after'))).toBe('accepted');
      });
    });
  });
});
