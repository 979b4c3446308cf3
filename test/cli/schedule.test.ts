import { ScheduleOverlapPolicy } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { changeSchedule } from '../../src/cli/schedule.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

describe('crmsync schedule', () => {
  it('creates, lists, pauses, resumes and deletes a Temporal Schedule whose runs sync', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 120, seed: 2 } }, async (env) => {
      const id = `crmsync-test-${env.queues.main}`;
      const created = await runCli(['schedule', 'create', '--every', '15m', '--reconcile-every', '6h', '--stream', 'contacts', '--stream', 'tags', '--id', id], env.env);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain(`schedule ${id}: sync every 15m, contacts reconciliation every 6h`);

      const handle = env.client.schedule.getHandle(id);
      const d = await handle.describe();
      expect(d.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
      // Missed slots fire at most once after the server was down: the window holds one slot at most.
      expect(Number(d.policies.catchupWindow)).toBeLessThan(15 * 60_000);
      expect(Number(d.spec.intervals?.[0]?.every)).toBe(15 * 60_000);
      const action = d.action as { workflowType: string; args?: unknown[] };
      expect(action.workflowType).toBe('syncWorkflow');
      expect(action.args?.[0]).toMatchObject({ streams: ['contacts', 'tags'], reconcile: 'auto', reconcileEveryMs: 6 * 3_600_000 });

      // A triggered action runs a real sync through the worker.
      await handle.trigger();
      const deadline = Date.now() + 60_000;
      let runs: Record<string, unknown>[] = [];
      while (Date.now() < deadline) {
        runs = await env.read((w) => w.query(`SELECT stream, status FROM _sync_runs WHERE status = 'succeeded'`)).catch(() => []);
        if (runs.length >= 2) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(runs.map((r) => r.stream).sort()).toEqual(['contacts', 'tags']);

      const list = await runCli(['schedule', 'list'], env.env);
      // The triggered run is the last one; the next is a time to come.
      expect(list.stdout).toMatch(new RegExp(`${id}\\s+active\\s+every 15m\\s+last 20\\d\\d-\\S+Z\\s+next 20\\d\\d-\\S+Z`));
      expect((await runCli(['schedule', 'pause', '--id', id], env.env)).stdout).toContain('paused');
      expect((await handle.describe()).state.paused).toBe(true);
      // Paused, nothing is next.
      expect((await runCli(['schedule', 'list'], env.env)).stdout).toMatch(new RegExp(`${id}\\s+paused\\s+every 15m\\s+last \\S+\\s+next -`));
      // resume and delete share pause's code path: called in-process to keep the test short.
      await changeSchedule(env.client, id, 'resume');
      expect((await handle.describe()).state.paused).toBe(false);
      await changeSchedule(env.client, id, 'delete');
      const gone = await runCli(['schedule', 'pause', '--id', id], env.env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(/No schedule .*crmsync schedule list.*\[SCHEDULE_NOT_FOUND\]/);
    });
  });

  it('checks the CRM before creating: a wrong password or no CRM at all is refused, --no-check-crm skips it', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 5, seed: 3 } }, async (env) => {
      const id = `crmsync-test-check-${env.queues.main}`;
      const exists = () =>
        env.client.schedule
          .getHandle(id)
          .describe()
          .then(
            () => true,
            () => false,
          );
      const wrong = await runCli(['schedule', 'create', '--every', '15m', '--id', id], { ...env.env, CRM_PASSWORD: 'not-the-password' });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/CRM_UNAUTHORIZED/);
      expect(wrong.stderr).not.toContain('not-the-password');
      const noCrm = { ...env.env, CRM_BASE_URL: '', CRM_USERNAME: '', CRM_PASSWORD: '' };
      const unset = await runCli(['schedule', 'create', '--every', '15m', '--id', id], noCrm);
      expect(unset.code).toBe(1);
      expect(unset.stderr).toMatch(/CRM connection is not configured.*--no-check-crm/);
      expect(await exists()).toBe(false);
      const unchecked = await runCli(['schedule', 'create', '--every', '15m', '--id', id, '--no-check-crm'], noCrm);
      expect(unchecked.code, unchecked.stderr).toBe(0);
      expect(await exists()).toBe(true);
      await changeSchedule(env.client, id, 'delete');
    });
  });

  it('refuses an empty id, a zero or a longer-than-a-year interval, before anything is created', { timeout: 60_000 }, async () => {
    for (const [args, message] of [
      [['create', '--every', '15m', '--id', ' '], /--id " " is not a schedule id; use 1 to 200 characters/],
      [['pause', '--id', ''], /--id "" is not a schedule id/],
      [['create', '--every', '0m'], /--every "0m" is zero; give a positive duration/],
      [['create', '--every', '15m', '--reconcile-every', '400d'], /--reconcile-every "400d" is longer than a year; use at most 366d/],
    ] as const) {
      const r = await runCli(['schedule', ...args], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(message);
    }
  });
});
