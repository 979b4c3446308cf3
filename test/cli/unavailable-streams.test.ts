import { describe, expect, it } from 'vitest';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { runCli } from './run-cli.js';

describe('streams the CRM lacks', () => {
  it('are warnings in the sync summary and in status, and the run exits 0', { timeout: 150_000 }, async () => {
    // A CRM without the report routes (of either kind) and without the automation module.
    await withSyncEnv({ sim: { contacts: 40, seed: 3, mode: 'real', unavailable: ['/reports', '/funnels'] } }, async (env) => {
      const sync = await runCli(['sync', '--per-page', '20'], env.env);
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout).toMatch(/^ {2}reports\s+warning: not available on this CRM \(neither \/reports\/overview nor \/reports\/dashboard-stats exists\)$/m);
      expect(sync.stdout).toMatch(/^ {2}funnels\s+warning: not available on this CRM \(GET \/funnels answers 404 rest_no_route\)$/m);
      expect(sync.stdout).toMatch(/^ {2}funnel_subscribers\s+warning: not available on this CRM/m);
      // The streams the CRM has were synced.
      expect(sync.stdout).toMatch(/^ {2}contacts\s+backfill\s+rows 40\s/m);
      expect(sync.stdout).toMatch(/^ {2}tags\s+\S+\s+rows 8\s/m);
      expect(sync.stdout).not.toMatch(/CRM_BASE_URL/);

      const status = await runCli(['status'], env.env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/^reports .*skipped.*\n\s+warning: not available on this CRM/m);
      const json = await runCli(['status', '--json'], env.env);
      const report = JSON.parse(json.stdout) as { streams: { stream: string; warning: string | null; lastError: unknown; lastRun: { status: string } | null }[] };
      const by = (s: string) => report.streams.find((x) => x.stream === s);
      for (const s of ['reports', 'funnels', 'funnel_subscribers']) {
        expect(by(s)).toMatchObject({ warning: expect.stringMatching(/^not available on this CRM/), lastError: null, lastRun: { status: 'skipped' } });
      }
      expect(by('contacts')).toMatchObject({ warning: null, lastRun: { status: 'succeeded' } });
    });
  });
});
