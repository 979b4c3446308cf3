import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { syncWorkflowId } from '../../workflows/sync-ids.js';
import { startCli } from './run-cli.js';

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('crmsync sync on a Temporal of the user own (TEMPORAL_ADDRESS) with no worker running', () => {
  it('says no worker polls and names the fix; a cancel then ends the command, and the run ends cancelled once a worker comes', { timeout: 120_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 20 } }, async (env) => {
      const cli = startCli(['sync', '--stream', 'tags'], env.env, 60_000);
      await until(() => cli.output().stderr.includes('no crmsync worker polls'), 'the warning');
      const warning = cli.output().stderr;
      expect(warning).toContain(`task queue "${env.queues.main}" (workflows) or "${env.queues.warehouse}" (the warehouse writer) on ${env.env.TEMPORAL_ADDRESS}`);
      expect(warning).toMatch(/the sync waits until one does; start `crmsync worker`/);
      expect(cli.output().code).toBeNull();

      // SIGTERM (or Ctrl-C): the cancel cannot be taken up, so the command says so and ends.
      cli.child.kill('SIGTERM');
      const ended = await cli.done;
      expect(ended.code, ended.stderr).toBe(1);
      const workflowId = syncWorkflowId(env.queues.main);
      expect(ended.stderr).toContain(`no crmsync worker polls task queue "${env.queues.main}", so the run ${workflowId} stays open in Temporal`);
      expect(ended.stderr).toMatch(/\[NO_WORKER\]/);

      // What the message promises: once a worker polls, the run ends as cancelled.
      env.startWorker();
      const result = await env.client.workflow
        .getHandle(workflowId)
        .result()
        .then(
          () => 'completed',
          (err: unknown) => (err instanceof WorkflowFailedError ? err.cause?.name : String(err)),
        );
      expect(result).toBe('CancelledFailure');
    });
  });
});
