import { describe, expect, it } from 'vitest';
import { createBatchFrames } from '../../src/webhooks/batch-frames.js';
import { decodeFrames, encodeFrame, frameLength, type SpoolRecord } from '../../src/webhooks/spool-frame.js';

const record = (seq: number, body: string): SpoolRecord => ({
  seq,
  deliveryId: `d-${seq}`,
  webhookId: 7,
  event: 'contact.updated',
  known: true,
  receivedAt: 1_700_000_000_000 + seq,
  body: Buffer.from(body),
});

const framed = (records: SpoolRecord[]) => records.map((r) => ({ record: r, frameBytes: frameLength(r) }));
const sizeOf = (batch: { frameBytes: number }[]) => batch.reduce((n, p) => n + p.frameBytes, 0);

describe('batch frames', () => {
  it('encodes each batch as its frames one by one, a smaller batch after a larger one included', () => {
    const encode = createBatchFrames();
    const large = framed([record(1, `{"a":"${'x'.repeat(5000)}"}`), record(2, '{"b":2}')]);
    const first = encode(large, sizeOf(large));
    expect(first.equals(Buffer.concat(large.map((p) => encodeFrame(p.record))))).toBe(true);
    const small = framed([record(3, '{"c":3}')]);
    const second = encode(small, sizeOf(small));
    // Exactly the batch's bytes: no tail of the earlier, larger batch.
    expect(second.length).toBe(sizeOf(small));
    expect(decodeFrames(second).records.map((d) => d.record)).toEqual([small[0]!.record]);
  });

  it('gives a batch above the shared buffer its own buffer, so the shared one stays bounded', () => {
    const encode = createBatchFrames();
    const small = framed([record(1, '{"a":1}')]);
    const shared = encode(small, sizeOf(small));
    const huge = framed([record(2, `{"h":"${'y'.repeat(1_100_000)}"}`)]);
    const own = encode(huge, sizeOf(huge));
    expect(decodeFrames(own).records.map((d) => d.record)).toEqual([huge[0]!.record]);
    // The next small batch goes back to the same shared buffer, which never grew past 1 MiB.
    const next = framed([record(3, '{"c":3}')]);
    const again = encode(next, sizeOf(next));
    expect(again.buffer).toBe(shared.buffer);
    expect(again.buffer.byteLength).toBeLessThanOrEqual(1024 * 1024);
    expect(decodeFrames(again).records.map((d) => d.record)).toEqual([next[0]!.record]);
  });
});
