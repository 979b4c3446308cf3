import { describe, expect, it } from 'vitest';
import type { SimulatorTruth } from '../../src/simulator/index.js';
import { createContactActivities } from '../../activities/sync-contacts.js';
import { silentLogger } from '../../src/logger.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { withSyncEnv } from './helpers/sync-env.js';

// Pinned so that the plugin's 30-day series cover seeded contacts (created in 2024-2025).
const NOW = Date.parse('2025-12-20T15:00:00Z');

/** Per funnel, the step report computed from the truth: entrants, then contacts per reached step. */
function stepCounts(truth: SimulatorTruth): Map<number, { sequenceId: number; count: number }[]> {
  const out = new Map<number, { sequenceId: number; count: number }[]>();
  for (const f of truth.funnels as { id: number; steps: { id: number }[] }[]) {
    if (f.steps.length === 0) continue;
    const subs = truth.funnelSubscribers.filter((s) => s.funnelId === f.id) as { subscriberId: number; metrics: { sequenceId: number }[] }[];
    const rows = [{ sequenceId: 0, count: new Set(subs.map((s) => s.subscriberId)).size }];
    for (const st of f.steps) {
      const count = subs.reduce((n, s) => n + s.metrics.filter((m) => m.sequenceId === st.id).length, 0);
      if (count > 0) rows.push({ sequenceId: st.id, count });
    }
    out.set(f.id, rows);
  }
  return out;
}

describe('streams against the real deployment (fluentcrm-2.9 mode) and the interface', () => {
  it('custom values and funnel subscribers land exactly in real mode (items 1 and 2)', { timeout: 120_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 240, seed: 31, mode: 'real' } }, async (env) => {
      const run = await env.sync({ streams: ['contacts', 'funnel_subscribers'] });
      expect(run.failed).toEqual([]);
      const truth = env.sim.truth();
      // The truth has contacts with values and funnel subscribers, or the comparison proves nothing.
      expect(truth.contacts.filter((c) => Object.keys(c.custom_values).length > 0).length).toBeGreaterThan(30);
      expect(truth.funnelSubscribers.length).toBeGreaterThan(10);
      expect(await env.read((w) => differencesFromTruth(w, truth, ['contacts', 'funnel_subscribers']))).toEqual([]);
      const held = await env.read((w) => w.query(`SELECT count(*) AS n FROM contacts WHERE json_array_length(json_keys(custom_values)) > 0`));
      expect(Number(held[0]?.n)).toBe(truth.contacts.filter((c) => Object.keys(c.custom_values).length > 0).length);
      // subscriber_growth reads the contacts themselves, so it is the same on either kind of CRM.
      const growth = await env.read((w) => w.query(`SELECT sum(new_contacts) AS n, sum(new_subscribed) AS s, max(total_contacts) AS t FROM subscriber_growth`));
      expect([Number(growth[0]?.n), Number(growth[0]?.s), Number(growth[0]?.t)]).toEqual([
        truth.contacts.length,
        truth.contacts.filter((c) => c.status === 'subscribed').length,
        truth.contacts.length,
      ]);

      // A contact created after the backfill comes through the newest-first check with its values.
      const created = env.sim.mutate.createContact({ email: 'custom-new@example.com', status: 'subscribed', custom_values: { job_title: 'Engineer', favorite_color: 'Green' } });
      expect(created.custom_values).toEqual({ job_title: 'Engineer', favorite_color: 'Green' });
      const second = await env.sync({ streams: ['contacts'], reconcile: 'never' });
      expect(second.failed).toEqual([]);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);
    });
  });

  it('targeted single-contact fetches (confirmations, webhook refetches) carry custom values in real mode', { timeout: 60_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 60, seed: 5, mode: 'real' } }, async (env) => {
      const refetch = createClientRefetcher(env.runtime.client as never);
      const withValues = env.sim.truth().contacts.filter((c) => Object.keys(c.custom_values).length > 0);
      expect(withValues.length).toBeGreaterThan(3);
      for (const c of withValues.slice(0, 4)) {
        const got = await refetch.contact(c.id);
        expect(got?.custom_values).toEqual(c.custom_values);
      }
    });
  });

  it('tombstone confirmations load the custom values of the contacts they find (real mode)', { timeout: 60_000 }, async () => {
    await withSyncEnv({ worker: false, sim: { contacts: 50, seed: 8, mode: 'real' } }, async (env) => {
      const { client, writes } = env.runtime;
      // The warehouse holds every contact without its values (as a listing without custom_fields=true gives them).
      const bare = await client.contacts.listPage({ page: 1, perPage: 100, order: 'asc', orderBy: 'id' });
      expect(bare.items.every((c) => Object.keys(c.custom_values).length === 0)).toBe(true);
      await writes.run((w) => w.loadContacts(bare.items, { loadId: 'bare', syncedAt: new Date() }));
      // A scan that sees no page: every held contact is a candidate, confirmed one by one.
      const acts = createContactActivities({ ...env.runtime, logger: silentLogger });
      const scan = await acts.startContactsScan({ mode: 'reconcile', perPage: 100, loadId: 'confirm' });
      const finished = await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'confirm' });
      expect(finished.restored).toBe(50);
      expect(env.sim.truth().contacts.filter((c) => Object.keys(c.custom_values).length > 0).length).toBeGreaterThan(10);
      expect(await env.read((w) => differencesFromTruth(w, env.sim.truth(), ['contacts']))).toEqual([]);
    });
  });

  for (const mode of ['real', 'spec'] as const) {
    it(`reports: probed once, remembered, and the tables and views filled (${mode} mode, item 3)`, { timeout: 120_000 }, async () => {
      await withSyncEnv({ sim: { contacts: 220, seed: 9, mode, now: () => NOW, timezone: 'America/New_York' } }, async (env) => {
        const first = await env.sync({ streams: ['reports', 'funnels', 'campaigns'] });
        expect(first.failed).toEqual([]);
        const reports = first.streams.find((s) => s.stream === 'reports');
        expect(reports?.skipped).toBeUndefined();
        const state = await env.read((w) => w.getSyncState<{ routes: string }>('reports'));
        expect(state?.routes).toBe(mode === 'real' ? 'plugin' : 'interface');
        const truth = env.sim.truth();

        // funnel_step_dropoff equals the step counts computed from the simulator's truth.
        const dropoff = await env.read((w) => w.query(`SELECT funnel_id, sequence_id, reached, dropped FROM funnel_step_dropoff ORDER BY funnel_id, sequence_id`));
        const want = stepCounts(truth);
        expect(want.size).toBeGreaterThan(1);
        for (const [funnelId, rows] of want) {
          const got = dropoff.filter((r) => Number(r.funnel_id) === funnelId).map((r) => ({ sequenceId: Number(r.sequence_id), count: Number(r.reached) }));
          expect([funnelId, got]).toEqual([funnelId, rows]);
        }

        const perf = await env.read((w) => w.query(`SELECT id, sent, opens, clicks FROM campaign_performance ORDER BY id`));
        const campaigns = truth.campaigns as { id: number; stats: { sent: number; opened: number; clicked: number } }[];
        expect(perf.map((r) => [Number(r.id), Number(r.sent), Number(r.opens), Number(r.clicks)])).toEqual(
          campaigns.map((c) => [c.id, c.stats.sent, c.stats.opened, c.stats.clicked]).sort((a, b) => (a[0] as number) - (b[0] as number)),
        );

        if (mode === 'real') {
          const dash = await env.read((w) => w.query(`SELECT CAST(json_extract(data, '$.stats.total_subscribers.count') AS BIGINT) AS n FROM report_dashboard_stats`));
          expect(dash.map((r) => Number(r.n))).toEqual([truth.contacts.filter((c) => c.status === 'subscribed').length]);
          // The plugin's subscriber series: subscribed contacts by site-local creation day, 2025-11-19 .. 2025-12-20.
          const series = await env.read((w) => w.query(`SELECT strftime(day, '%Y-%m-%d') AS d, count FROM report_daily_counts WHERE report = 'subscribers' AND count > 0 ORDER BY d`));
          const byDay = new Map<string, number>();
          for (const c of truth.contacts) {
            const day = String(c.created_at).slice(0, 10);
            if (c.status === 'subscribed' && day >= '2025-11-20' && day <= '2025-12-20') byDay.set(day, (byDay.get(day) ?? 0) + 1);
          }
          expect(byDay.size).toBeGreaterThan(0);
          expect(series.map((r) => [r.d, Number(r.count)])).toEqual([...byDay].sort());
          // The email series: each campaign's sends on its site-local scheduled (else updated) day, within the 31 days.
          const sent = await env.read((w) => w.query(`SELECT coalesce(sum(count), 0) AS n FROM report_daily_counts WHERE report = 'email_sents'`));
          const localDay = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit' });
          const wantSent = (truth.campaigns as { stats: { sent: number }; scheduledAt: number | null; updatedAt: number }[])
            .filter((c) => {
              const day = localDay.format(c.scheduledAt ?? c.updatedAt);
              return day >= '2025-11-20' && day <= '2025-12-20';
            })
            .reduce((n, c) => n + c.stats.sent, 0);
          expect(Number(sent[0]?.n)).toBe(wantSent);
        } else {
          const overview = await env.read((w) => w.query(`SELECT count(*) AS n FROM report_overview`));
          expect(Number(overview[0]?.n)).toBe(1);
          const growth = await env.read((w) => w.query(`SELECT count(*) AS n FROM report_daily_counts WHERE report = 'subscriber_growth'`));
          expect(Number(growth[0]?.n)).toBe(30);
        }

        // The second run asks the remembered kind first: no probe of the other kind.
        env.sim.resetStats();
        const second = await env.sync({ streams: ['reports'] });
        expect(second.failed).toEqual([]);
        // (Real mode: the interface's /reports/overview is served by the 404 catch-all route.)
        expect(Object.keys(env.sim.stats().byRoute).filter((k) => k.includes('/reports/*'))).toEqual([]);
        if (mode === 'real') expect(second.streams[0]?.requests).toBe((reports?.requests ?? 0) - 1);
      });
    });
  }

  it('a report route missing on a CRM that has the others names that route, not the base URL', { timeout: 60_000 }, async () => {
    await withSyncEnv({ sim: { contacts: 30, seed: 2, mode: 'real', unavailable: ['/reports/email-opens'] } }, async (env) => {
      const err = await env.sync({ streams: ['reports'] }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toMatch(/has the plugin report routes but answers GET \/reports\/email-opens with 404 rest_no_route/);
      expect(err?.message).not.toMatch(/check that CRM_BASE_URL/);
    });
  });
});
