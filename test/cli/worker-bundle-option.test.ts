import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { MAX_WORKFLOW_BUNDLE_BYTES, WorkerOptions, workerCommand } from '../../src/cli/worker.js';

/**
 * `crmsync worker --workflow-bundle <path>` names a file the worker loads whole: a directory, a
 * missing file or one past the limit is refused before the worker starts anything. TEMPORAL_ADDRESS
 * points at a port nobody listens on, so a worker that went past the check fails with another error.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-bundle-option-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('crmsync worker --workflow-bundle', () => {
  it('refuses a bundle past 64 MiB, a missing file and a directory, naming the option', async () => {
    const config = loadConfig({
      CRM_BASE_URL: 'https://crm.example.test/v2',
      CRM_USERNAME: 'u',
      CRM_PASSWORD: 'bundle-test-password',
      CRMSYNC_DATA_DIR: dir,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      CRMSYNC_EMBEDDED_IDLE: '0',
    });
    const big = join(dir, 'big-bundle.js');
    await writeFile(big, '// a bundle\n');
    await truncate(big, MAX_WORKFLOW_BUNDLE_BYTES + 1); // sparse: nothing is written to the disk
    for (const [path, message] of [
      [big, /is 67108865 bytes, more than the 67108864 a workflow bundle may have/],
      [join(dir, 'absent.js'), /is not a file/],
      [dir, /is not a file/],
    ] as const) {
      const e = await workerCommand(config, WorkerOptions.parse({ workflowBundle: path }), silentLogger).then(
        () => new Error('the worker ran'),
        (err: unknown) => err as Error,
      );
      expect(e, path).toBeInstanceOf(ConfigError);
      expect(e.message).toMatch(/--workflow-bundle/);
      expect(e.message).toMatch(message);
    }
  });
});
