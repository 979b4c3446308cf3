import { describe, expect, it } from 'vitest';
import { SMALL_TUNING, withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

describe('crmsync sync, status and verify', () => {
  it('syncs with progress lines, reports status, verifies clean, then lists a difference and exits 1', { timeout: 150_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 350, seed: 4 } }, async (env) => {
      const sync = await runCli(['sync', '--stream', 'contacts', '--stream', 'tags', '--per-page', '50'], env.env);
      expect(sync.code, sync.stderr).toBe(0);
      // Not a terminal: plain, timestamped progress lines, then the summary.
      expect(sync.stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+ contacts\s+\S+\s+.*\/7 pages/m);
      expect(sync.stdout).toMatch(/^ {2}contacts\s+backfill\s+rows 350\s+inserted 350/m);

      const status = await runCli(['status', '--json'], env.env);
      expect(status.code, status.stderr).toBe(0);
      const report = JSON.parse(status.stdout) as { streams: { stream: string; rows: number; lastRun: { status: string } | null }[]; contacts: { maxId: number } };
      expect(report.streams.find((s) => s.stream === 'contacts')).toMatchObject({ rows: 350, lastRun: { status: 'succeeded' } });
      expect(report.streams.find((s) => s.stream === 'campaigns')?.lastRun).toBeNull();
      expect(report.contacts.maxId).toBe(Math.max(...env.sim.truth().contacts.map((c) => c.id)));

      const clean = await runCli(['verify', '--stream', 'contacts', '--stream', 'tags'], env.env);
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(/the warehouse matches the CRM/);

      const [victim, changed] = env.sim.truth().contacts;
      env.sim.mutate.deleteContact(victim!.id);
      env.sim.mutate.updateContact(changed!.id, { city: 'Reykjavik' });
      const dirty = await runCli(['verify', '--stream', 'contacts'], env.env);
      expect(dirty.code).toBe(1);
      expect(dirty.stdout).toMatch(new RegExp(`contacts +deleted in crm +1  ids ${victim!.id}\n`));
      expect(dirty.stdout).toContain(`contact ${victim!.id} (${victim!.email}) is live in the warehouse but no longer in the CRM`);
      expect(dirty.stdout).toMatch(new RegExp(`contact ${changed!.id}: city warehouse .* vs CRM "Reykjavik"`));
      expect(dirty.stdout).toMatch(/^3 difference\(s\)/);
      // The update moved updated_at too: shown as ISO times, not epoch milliseconds.
      expect(dirty.stdout).toMatch(new RegExp(`contact ${changed!.id}: updated_at warehouse "\\d{4}-\\d\\d-\\d\\dT[^"]+Z" vs CRM "\\d{4}-[^"]+Z"`));
      expect(dirty.stderr).toMatch(/differs from the CRM in 3 place\(s\).*crmsync sync --full.*\[VERIFY_MISMATCH\]/);
    });
  });

  it('names the fix for wrong credentials, a missing capability, an unreachable CRM, an unknown stream and Temporal unreachable', { timeout: 120_000 }, async () => {
    const noCaps = { username: 'no-caps', password: 'no-caps-password-1', capabilities: [] };
    await withSyncEnv({ worker: false, sim: { contacts: 5, users: [noCaps] } }, async (env) => {
      // Independent failures: run them side by side to keep the test short.
      const [wrong, unreachable, stream, temporal, forbidden] = await Promise.all([
        runCli(['sync'], { ...env.env, CRM_PASSWORD: 'not-the-password' }),
        runCli(['sync'], { ...env.env, CRM_BASE_URL: 'http://127.0.0.1:9/v2' }),
        runCli(['sync', '--stream', 'contact'], env.env),
        runCli(['sync', '--stream', 'tags'], { ...env.env, TEMPORAL_ADDRESS: '127.0.0.1:9' }),
        runCli(['sync'], { ...env.env, CRM_USERNAME: noCaps.username, CRM_PASSWORD: noCaps.password }),
      ]);
      // Authenticated but without the capability: the message says which permissions to grant.
      expect(forbidden.code).toBe(1);
      expect(forbidden.stderr).toMatch(/grant that user .*\[CRM_FORBIDDEN\]/);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/\[CRM_UNAUTHORIZED\]/);
      expect(wrong.stderr).not.toContain('not-the-password');

      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toMatch(/\[CRM_NETWORK\]/);

      expect(stream.code).toBe(1);
      expect(stream.stderr).toMatch(/Unknown stream "contact"; use one of: contacts/);

      expect(temporal.code).toBe(1);
      expect(temporal.stderr).toMatch(/Cannot reach Temporal at 127\.0\.0\.1:9: .*TEMPORAL_ADDRESS.*\[TEMPORAL_UNREACHABLE\]/);
    });
  });

  it('status shows the live progress of a running sync', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 1500, seed: 6, faults: { latencyMs: { min: 150, max: 200 } } } }, async (env) => {
      const running = env.sync({ streams: ['contacts'], tuning: { ...SMALL_TUNING, parallelism: 2 } });
      try {
        while ((env.sim.stats().byRoute['GET /subscribers'] ?? 0) < 3) await new Promise((r) => setTimeout(r, 50));
        // Hold the backfill while status starts (a loaded machine takes seconds to start a CLI):
        // pages answer slowly until status has read the progress, then at full speed.
        env.sim.setFaults({ latencyMs: { min: 4_000, max: 4_000 } });
        const status = await runCli(['status', '--json'], env.env).finally(() => env.sim.setFaults({}));
        expect(status.code, status.stderr).toBe(0);
        const report = JSON.parse(status.stdout) as { streams: { stream: string; live?: { phase: string; pagesTotal: number; pagesDone: number } }[] };
        const live = report.streams.find((s) => s.stream === 'contacts')?.live;
        expect(live).toMatchObject({ phase: 'backfill', pagesTotal: 30 });
        expect(live!.pagesDone).toBeLessThan(30);
      } finally {
        await running;
      }
    });
  });
});
