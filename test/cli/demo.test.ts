import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

describe('crmsync demo', () => {
  it('starts the simulator, an embedded Temporal and a worker, syncs everything and shows what landed', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-demo-'));
    try {
      // No TEMPORAL_ADDRESS: the demo must bring its own Temporal, as on a fresh machine.
      const r = await runCli(['demo', '--contacts', '600', '--seed', '3'], { CRMSYNC_DATA_DIR: dir, CRMSYNC_LOG_LEVEL: 'warn' }, 170_000);
      expect(r.stderr).not.toMatch(/unexpected error/);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(r.stdout).toMatch(/what landed:/);
      expect(r.stdout).toMatch(/^ {2}contacts\s+600 rows$/m);
      expect(r.stdout).toMatch(/^ {2}funnel_subscribers\s+[1-9]\d* rows$/m);
      expect(r.stdout).toMatch(/status\s+\| contacts \| tagged/);
      expect(r.stdout).toMatch(/^subscribed\s+\| \d+/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
