import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { withTemporal } from '../../src/temporal/connect.js';
import { writeEmbeddedServerRecord } from '../../src/temporal/embedded-server-file.js';
import { testTemporalAddress } from '../helpers/temporal.js';

describe('a command that joined another command’s embedded Temporal', () => {
  it('is told when that server goes away, with the fix', { timeout: 30_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'crmsync-sibling-'));
    // Stands in for the sibling's server process (only its pid and command line are looked at);
    // the recorded address is the suite's real dev server, so joining really connects.
    const sibling = spawn('/bin/sh', ['-c', 'sleep 60', 'temporal-server-start-dev'], { stdio: 'ignore' });
    try {
      const namespace = inject('temporalNamespace');
      await writeEmbeddedServerRecord(dataDir, { address: testTemporalAddress(), pid: sibling.pid ?? -1, namespace });
      const env: NodeJS.ProcessEnv = { ...process.env, CRMSYNC_DATA_DIR: dataDir, TEMPORAL_NAMESPACE: namespace };
      delete env.TEMPORAL_ADDRESS;
      const reason = await withTemporal(loadConfig(env), async (t) => {
        expect(t.embedded).toBe(true);
        expect(t.serverLost.aborted).toBe(false);
        const lost = new Promise<unknown>((resolve) => t.serverLost.addEventListener('abort', () => resolve(t.serverLost.reason), { once: true }));
        sibling.kill('SIGKILL');
        return await lost;
      });
      expect(String((reason as Error).message)).toMatch(/stopped with the command that started it; run this command again/);
    } finally {
      sibling.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
