import { describe, expect, it } from 'vitest';
import { inLanes } from '../../src/sync/in-lanes.js';

/** A promise each call of which the test settles by hand: no clock decides anything. */
function gate(): { calls: { item: number; resolve: (v: number) => void; reject: (e: Error) => void }[]; fn: (item: number) => Promise<number> } {
  const calls: { item: number; resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  return { calls, fn: (item) => new Promise<number>((resolve, reject) => calls.push({ item, resolve, reject })) };
}
const settle = () => new Promise((r) => setImmediate(r));

describe('inLanes', () => {
  it('runs at most `lanes` at once, starts the next as one finishes, and returns results in item order', async () => {
    const g = gate();
    const done = inLanes([1, 2, 3, 4, 5], 2, g.fn);
    await settle();
    expect(g.calls.map((c) => c.item)).toEqual([1, 2]);
    g.calls[1]!.resolve(20);
    await settle();
    expect(g.calls.map((c) => c.item)).toEqual([1, 2, 3]);
    g.calls[0]!.resolve(10);
    g.calls[2]!.resolve(30);
    await settle();
    g.calls[3]!.resolve(40);
    g.calls[4]!.resolve(50);
    expect(await done).toEqual([10, 20, 30, 40, 50]);
  });

  it('starts nothing after a failure and throws it once the running ones have settled', async () => {
    const g = gate();
    let settledFirst = false;
    const done = inLanes([1, 2, 3, 4], 2, g.fn).catch((err: unknown) => ({ err, settledFirst }));
    await settle();
    g.calls[1]!.reject(new Error('route 2 is missing'));
    await settle();
    // Item 1 still runs; nothing new started, and the failure waits for it.
    expect(g.calls.map((c) => c.item)).toEqual([1, 2]);
    settledFirst = true;
    g.calls[0]!.resolve(10);
    const out = (await done) as { err: Error; settledFirst: boolean };
    expect(out.err.message).toBe('route 2 is missing');
    expect(out.settledFirst).toBe(true);
  });

  it('refuses a lane count that is not a positive integer', async () => {
    await expect(inLanes([1], 0, async (x) => x)).rejects.toThrow(RangeError);
  });
});
