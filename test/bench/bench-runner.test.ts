import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleMachineCpu } from '../../bench/runner/machine-cpu.js';
import { median, medianInterval } from '../../bench/runner/median.js';
import { BENCHMARKS, findBenchmarks } from '../../bench/runner/registry.js';
import { flattenFigures, summarizeResults } from '../../bench/runner/summarize-results.js';

describe('bench runner', () => {
  it('names only benchmarks whose scripts exist, and refuses an unknown name with the choices', () => {
    for (const b of BENCHMARKS) expect(existsSync(join('bench', b.file)), b.file).toBe(true);
    expect(findBenchmarks(['push', 'client']).map((b) => b.name)).toEqual(['client', 'push']);
    expect(findBenchmarks([]).length).toBe(BENCHMARKS.length);
    expect(() => findBenchmarks(['nope'])).toThrow(/Unknown benchmark nope; choose from simulator/);
  });

  it('summarizes every recorded result file as a markdown table of its figures', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-bench-'));
    try {
      await writeFile(join(dir, 'b.json'), JSON.stringify({ rowsPerSec: 1234, nested: { p99Ms: 4.5, note: 'a|b' }, samples: [1, 2, 3] }));
      await writeFile(join(dir, 'a.json'), JSON.stringify({ runs: [{ rate: 10 }, { rate: 50 }] }));
      await writeFile(join(dir, 'broken.json'), '{');
      const md = await summarizeResults(dir);
      expect(md.indexOf('## a')).toBeLessThan(md.indexOf('## b'));
      expect(md).toContain('| rowsPerSec | 1234 |');
      expect(md).toContain('| nested.p99Ms | 4.5 |');
      expect(md).toContain('| nested.note | a\\|b |');
      expect(md).toContain('| samples | 3 values |');
      expect(md).toContain('| runs[1].rate | 50 |');
      expect(md).toMatch(/## broken\.json\n\n\(unreadable: /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps a file of many labelled runs to its latest six, and counts a long series instead of listing it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-bench-'));
    try {
      const runs = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`run_${i}`, { seconds: i, at: new Date(Date.UTC(2026, 11, 1 + ((i * 4) % 9))).toISOString() }]));
      await writeFile(join(dir, 'log.json'), JSON.stringify({ note: 'kept', ...runs }));
      await writeFile(join(dir, 'rounds.json'), JSON.stringify({ rounds: Array.from({ length: 8 }, (_, i) => ({ ratio: i })), few: [{ ratio: 1 }] }));
      const md = await summarizeResults(dir);
      // Runs by their `at`: run_i on day 1 + (4i mod 9); the six latest are days 4-9.
      const shown = [...md.matchAll(/\| (run_\d)\.seconds \|/g)].map((m) => m[1]);
      expect(shown).toEqual(['run_1', 'run_2', 'run_3', 'run_4', 'run_6', 'run_8']);
      expect(md).toContain('| note | kept |');
      expect(md).toContain('| (older runs) | 3 more in the file |');
      expect(md).toContain('| rounds | 8 entries (see the file) |');
      expect(md).toContain('| few[0].ratio | 1 |');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('flattens nested figures to dotted keys', () => {
    expect(flattenFigures({ a: { b: 1, c: null }, d: 'x' })).toEqual([
      ['a.b', '1'],
      ['d', 'x'],
    ]);
  });

  it('takes the median of an even count as the mean of its two middle values, not the upper one', () => {
    // The webhooks bench's six per-round ratios of the ninth session's quiet run.
    expect(median([0.485, 0.489, 0.385, 0.385, 0.463, 0.53])).toBeCloseTo(0.474, 3);
    expect(median([3, 1, 2])).toBe(2);
    expect(() => median([])).toThrow(/no values/);
  });

  it('gives the median an interval from the order statistics, and none from too few values', () => {
    // Eight rounds: the 2nd smallest to the 2nd largest covers the median with 1 - 2 * 9/256.
    const eight = medianInterval([0.474, 0.53, 0.518, 0.474, 0.601, 0.467, 0.459, 0.562])!;
    expect(eight.low).toBe(0.467);
    expect(eight.high).toBe(0.562);
    expect(eight.coverage).toBeCloseTo(1 - 18 / 256, 10);
    // Six rounds: only the whole range reaches 90% (1 - 2/64).
    expect(medianInterval([6, 1, 5, 2, 4, 3])).toEqual({ low: 1, high: 6, coverage: 1 - 2 / 64 });
    // Four rounds cannot: even their whole range covers the median only 7 times in 8.
    expect(medianInterval([1, 2, 3, 4])).toBeNull();
    expect(medianInterval([1, 2, 3, 4], 0.8)).toEqual({ low: 1, high: 4, coverage: 0.875 });
  });
  it.runIf(process.platform === 'linux')('counts a core kept busy by this process among the machine cores busy', async () => {
    const cores = cpus().length;
    const stop = sampleMachineCpu(cores, 50);
    const until = performance.now() + 400;
    // Busy on this thread, yielding now and then so the sampler's timer runs.
    while (performance.now() < until) {
      const slice = performance.now() + 40;
      while (performance.now() < slice);
      await new Promise((r) => setImmediate(r));
    }
    const figures = stop()!;
    expect(figures.samples).toBeGreaterThan(0);
    expect(figures.meanCoresBusy).toBeGreaterThanOrEqual(0.5);
    expect(figures.meanCoresBusy).toBeLessThanOrEqual(cores);
    expect(figures.shareBelow).toBeGreaterThanOrEqual(0);
    expect(figures.shareBelow).toBeLessThanOrEqual(1);
  });
});
