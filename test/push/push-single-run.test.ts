import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pushCommand, pushWorkflowId } from '../../src/cli/push.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import { withTestWorker } from '../helpers/temporal.js';
import { testEnv } from '../helpers/test-env.js';

describe('one push per source at a time', () => {
  it('derives a stable workflow id from the source, different for different sources', () => {
    expect(pushWorkflowId('promo')).toBe(pushWorkflowId('promo'));
    expect(pushWorkflowId('promo')).not.toBe(pushWorkflowId('promo2'));
    expect(pushWorkflowId('query:abc def')).toMatch(/^crmsync-push-query_abc_def-[0-9a-f]{8}$/);
  });

  it('refuses a second push of a source while one runs, naming how to stop it', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-push-once-'));
    const sim = await startSimulator({ contacts: 1, seed: 9 });
    try {
      // The blocking run sits on a queue no worker serves, so it stays open for the whole test.
      await withTestWorker({}, async ({ client }) => {
        const config = loadConfig(testEnv(sim, dir, { CRMSYNC_TASK_QUEUE: `push-once-${randomUUID()}` }));
        const from = `promo_${randomUUID().slice(0, 8)}`;
        const workflowId = pushWorkflowId(from);
        const blocking = await client.workflow.start('pushWorkflow', { taskQueue: `idle-${randomUUID()}`, workflowId, args: [{ from }] });
        try {
          await expect(pushCommand(config, { from, dryRun: false, createMissingTags: false, batchSize: 10, batchSeconds: 1, sample: 0 }, silentLogger, undefined)).rejects.toMatchObject({
            code: 'PUSH_ALREADY_RUNNING',
            message: expect.stringContaining(workflowId),
          });
        } finally {
          await blocking.terminate('test done');
        }
      });
    } finally {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
