import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from '../../src/worker/limit-heap-growth.js';

const run = promisify(execFile);

/** The largest heap (MB) of heap-churn.ts in a process of its own, under `percent`. */
async function peakHeapMb(percent: number): Promise<number> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/worker/heap-churn.ts', String(percent)], { timeout: 60_000 });
  return Number(stdout.trim());
}

describe('limitHeapGrowth', () => {
  it("keeps a churning heap near its live set, where V8's own growth lets garbage pile up", async () => {
    const [own, limited] = await Promise.all([peakHeapMb(0), peakHeapMb(25)]);
    // Live set about 30 MB: V8's own factor let the heap reach about 3x it, 25% well under 2x.
    expect(limited).toBeLessThan(own * 0.75);
  }, 90_000);

  it('refuses a negative or fractional percent', () => {
    expect(() => limitHeapGrowth(-1)).toThrow(/whole number of percent/);
    expect(() => limitHeapGrowth(2.5)).toThrow(/whole number of percent/);
  });
});
