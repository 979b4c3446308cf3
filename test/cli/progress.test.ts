import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressRenderer, formatDuration, formatProgressLine } from '../../src/cli/progress.js';
import type { StreamProgress } from '../../workflows/sync-types.js';

const base: StreamProgress = {
  stream: 'contacts',
  runId: 'r',
  phase: 'backfill',
  pagesDone: 25,
  pagesTotal: 100,
  rows: 12_500,
  requests: 26,
  startedAtMs: 0,
  updatedAtMs: 10_000,
  drift: false,
};

function capture(tty: boolean): { out: PassThrough & { isTTY?: boolean }; text: () => string } {
  const out = Object.assign(new PassThrough(), { isTTY: tty });
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return { out, text: () => text };
}

describe('progress output', () => {
  it('shows pages done of total, rows/s and an ETA from the pace so far', () => {
    const line = formatProgressLine(base, 10_000, true);
    expect(line).toContain('[######------------------]');
    expect(line).toContain('25/100 pages');
    expect(line).toContain('1,250 rows/s');
    expect(line).toContain('ETA 0:30');
    expect(formatProgressLine({ ...base, pagesTotal: undefined }, 10_000, false)).not.toMatch(/pages|ETA/);
    expect(formatDuration(3_723_000)).toBe('1:02:03');
  });

  it('redraws in place on a terminal and prints throttled plain lines otherwise', () => {
    let now = 10_000;
    const tty = capture(true);
    const bars = createProgressRenderer(tty.out, () => now);
    bars.update([base, { ...base, stream: 'tags', pagesTotal: undefined }]);
    bars.update([
      { ...base, pagesDone: 50 },
      { ...base, stream: 'tags', pagesTotal: undefined },
    ]);
    expect(tty.text()).toContain('\x1b[2A');
    expect(tty.text().split('\x1b[2K').length - 1).toBe(4);

    const plain = capture(false);
    const lines = createProgressRenderer(plain.out, () => now);
    lines.update([base]);
    now += 1_000;
    lines.update([{ ...base, pagesDone: 30 }]); // same phase, too soon: skipped
    now += 5_000;
    lines.update([{ ...base, pagesDone: 60 }]);
    lines.finish([{ ...base, phase: 'done', pagesDone: 100 }]);
    const printed = plain.text().trim().split('\n');
    expect(printed).toHaveLength(3);
    expect(printed.every((l) => /^\d{4}-\d\d-\d\dT/.test(l))).toBe(true);
    expect(plain.text()).not.toContain('\x1b[');
    expect(printed[2]).toMatch(/done\s+100\/100 pages/);
  });
});
