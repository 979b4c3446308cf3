import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pushCommand, pushWorkflowId } from '../../src/cli/push.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator } from '../../src/simulator/index.js';
import { Writable } from 'node:stream';
import { createActivities } from '../../activities/index.js';
import { crmClientFromConfig } from '../../src/crm/index.js';
import { parseSourceSpec } from '../../src/push/source-spec.js';
import { openOwnerFromConfig } from '../../src/worker/open-owner-from-config.js';
import { withTestWorker } from '../helpers/temporal.js';
import { testEnv } from '../helpers/test-env.js';

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !check();) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('one push per source at a time', () => {
  it('derives a stable workflow id from the source, different for different sources', () => {
    expect(pushWorkflowId('promo')).toBe(pushWorkflowId('promo'));
    expect(pushWorkflowId('promo')).not.toBe(pushWorkflowId('promo2'));
    expect(pushWorkflowId('query:abc def')).toMatch(/^crmsync-push-query_abc_def-[0-9a-f]{8}$/);
  });

  it('a second push of a source while one runs follows it to its end, then pushes what it did not', { timeout: 90_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-push-once-'));
    const sim = await startSimulator({ contacts: 1, seed: 9, mode: 'real' });
    try {
      const taskQueue = `push-once-${randomUUID()}`;
      const config = loadConfig(testEnv(sim, dir, { CRMSYNC_TASK_QUEUE: taskQueue }));
      const from = `SELECT 'solo-${randomUUID().slice(0, 8)}@example.test' AS email, 'subscribed' AS status`;
      const workflowId = pushWorkflowId(parseSourceSpec(from).sourceId);
      const owner = await openOwnerFromConfig(config);
      const crm = crmClientFromConfig(config);
      try {
        await withTestWorker({ taskQueue, warehouseActivities: createActivities({ config, logger: silentLogger, crm, owner }).warehouse }, async ({ client }) => {
          // The earlier push: its command was killed and no worker serves its queue.
          const earlier = await client.workflow.start('pushWorkflow', { taskQueue: `idle-${randomUUID()}`, workflowId, args: [{ from }] });
          const said: string[] = [];
          const out = new Writable({ write: (chunk: Buffer, _enc, done) => (said.push(chunk.toString()), done()) });
          let settled = false;
          const second = pushCommand(config, { from, dryRun: false, createMissingTags: false, batchSize: 10, batchSeconds: 1, sample: 0 }, silentLogger, out).finally(() => (settled = true));
          await waitFor(() => said.join('').includes('following it to the end first'));
          expect(said.join('')).toContain(workflowId);
          // It waits for the earlier push rather than failing or starting beside it.
          expect(settled).toBe(false);
          expect(sim.stats().byRoute['POST /subscribers'] ?? 0).toBe(0);
          await earlier.terminate('the earlier push ends');
          expect(await second).toMatchObject({ toSend: 1, sent: 1, succeeded: 1, failed: 0 });
          expect(sim.stats().byRoute['POST /subscribers']).toBe(1);
        });
      } finally {
        await crm.close();
        await owner.close();
      }
    } finally {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
