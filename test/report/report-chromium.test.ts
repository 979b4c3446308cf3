import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookActivities } from '../../activities/webhook-activities.js';
import { createCrmClient } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { STREAMS } from '../../workflows/streams.js';
import { withCatalog } from '../../src/warehouse/index.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { registerWebhook } from '../../src/webhooks/register-webhook.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { createSpoolRangeReader } from '../../src/webhooks/spool-range-reader.js';
import { withWebhookService } from '../../src/webhooks/webhook-service.js';
import { runCli } from '../cli/run-cli.js';
import { withSyncEnv } from '../sync/helpers/sync-env.js';
import { launchChromium } from './chromium.js';
import { cellsOf, figure, near, VIEW_QUERIES, type Expected } from './report-expectations.js';

// The real chain: simulator -> two syncs on the shared Temporal dev server, and signed webhook
// deliveries to the receiver -> DuckDB -> the `crmsync report` CLI in a child process -> Debian's
// Chromium renders the file.
let dir: string;
let out: string;
let cli: { code: number | null; stdout: string; stderr: string };
let expected: Expected;
let truthTag1: { members: number; added: number };
let browser: Browser;
let page: Page;
const requests: string[] = [];
const problems: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-report-'));
  out = join(dir, 'out', 'report.html');
  await withSyncEnv({ sim: { seed: 7, contacts: 400, allowHttpWebhookUrls: true, webhookTimeScale: 0.001 } }, async (env) => {
    await env.sync({ streams: [...STREAMS], full: true });
    // Between the syncs: 7 contacts gain tag 1 and 3 lose tag 2, so "change since the previous sync" has something to show.
    const truth = env.sim.truth();
    const gain = truth.contacts.filter((c) => !c.tags.includes(1)).slice(0, 7);
    for (const c of gain) env.sim.mutate.addTag(c.id, 1);
    for (const c of truth.contacts.filter((x) => x.tags.includes(2)).slice(0, 3)) env.sim.mutate.removeTag(c.id, 2);
    truthTag1 = { members: env.sim.truth().contacts.filter((c) => c.tags.includes(1)).length, added: gain.length };
    await env.sync({ streams: ['contacts'], full: true });
    // The receiver applies real deliveries of a few edits (names and statuses: tags stay as synced).
    const client = createCrmClient({ baseUrl: env.sim.baseUrl, username: env.sim.credentials.username, password: env.sim.credentials.password });
    const secretsFile = join(env.dir, 'webhook-secrets.json');
    try {
      await withWebhookService(
        {
          spoolDir: join(env.dir, 'spool'),
          host: '127.0.0.1',
          port: 0,
          secrets: createSecretResolver({ secretsFile, reloadIntervalMs: 600_000 }),
        },
        async (service) => {
          await registerWebhook(client, { url: service.url, allowHttp: true }, secretsFile);
          const ids = env.sim
            .truth()
            .contacts.slice(10, 16)
            .map((c) => c.id);
          for (const id of ids) env.sim.mutate.updateContact(id, { first_name: `Hooked ${id}` });
          env.sim.mutate.setStatus(ids[0]!, 'unsubscribed');
          await env.sim.settleWebhooks(20_000);
          // The warehouse worker's apply activity, over the env's writes, applies what was spooled.
          const acts = createWebhookActivities({
            writes: env.runtime.writes,
            spool: createSpoolRangeReader(join(env.dir, 'spool')),
            refetcher: createClientRefetcher(client),
            logger: silentLogger,
            publishEveryMs: 0,
          });
          const target = service.spool.stats().committedSeq;
          expect(target).toBeGreaterThan(0);
          let applied = 0;
          for (let i = 0; i < 20 && applied < target; i++) applied = (await acts.applyWebhookSpool({ batchSize: 2_000, waitMs: 0 })).appliedSeq;
          expect(applied).toBe(target);
        },
      );
    } finally {
      await client.close();
    }
    // A failed stream run and a dead letter, as the sync and the receiver record them (neither can
    // be provoked here without a faulty CRM record).
    await env.read(async (w) => {
      const at = Date.now();
      await w.recordRun({
        runId: 'run-failed-1',
        stream: 'campaigns',
        mode: 'backfill',
        startedAt: new Date(at - 5_000),
        finishedAt: new Date(at - 4_000),
        status: 'failed',
        pages: 0,
        requests: 3,
        inserted: 0,
        updated: 0,
        unchanged: 0,
        deleted: 0,
        error: 'The CRM answered 503 three times; check that it is up',
      });
      await w.connection.run(`INSERT INTO webhook_events (delivery_id, event, received_at, event_at, applied_at, status, error) VALUES
        ('d-dead', 'contact.updated', TIMESTAMPTZ '2026-03-02 09:00:01+00', TIMESTAMPTZ '2026-03-02 09:00:00+00', TIMESTAMPTZ '2026-03-02 09:00:02+00', 'failed', 'validation failed for contact 12: email is invalid')`);
      await w.connection.run(`INSERT INTO webhook_dead_letters (delivery_id, event, received_at, reason, error, first_failed_at, last_failed_at, attempts) VALUES
        ('d-dead', 'contact.updated', TIMESTAMPTZ '2026-03-02 09:00:01+00', 'record', 'validation failed for contact 12: email is invalid', TIMESTAMPTZ '2026-03-02 09:00:02+00', TIMESTAMPTZ '2026-03-02 09:00:02+00', 1)`);
      await w.publishLake(); // the report reads the lake's catalog, as analysts do
    });
    cli = await runCli(['report', '--out', out], env.env, 120_000);
    expected = await withCatalog({ catalogPath: env.config.catalogPath }, async (w) => {
      const e: Record<string, Record<string, unknown>[]> = {};
      for (const [k, sql] of Object.entries(VIEW_QUERIES)) e[k] = await w.query(sql);
      return e as unknown as Expected;
    });
  });
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.setViewport({ width: 1000, height: 900 });
  await page.goto(pathToFileURL(out).href, { waitUntil: 'load' });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shots = join(tmpdir(), 'crmsync-report-screenshots');

// Run inside the page (puppeteer's $$eval and evaluate); the project compiles without the DOM library.
declare const document: { documentElement: { scrollWidth: number } };
declare function getComputedStyle(element: unknown): { display: string };

describe('crmsync report in a real Chromium', () => {
  it('writes one self-contained file and says where', async () => {
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout.trim()).toBe(out);
    const html = await readFile(out, 'utf8');
    // Nothing to fetch: no source or link but in-page anchors, no CSS url() or @import.
    expect(html).not.toMatch(/\s(src|href)\s*=\s*"(?!#)/i);
    expect(html).not.toMatch(/url\(|@import/i);
    expect(html).toMatch(/http-equiv="Content-Security-Policy" content="default-src 'none'/);
  });

  it('makes no network request and logs no error', async () => {
    await mkdir(shots, { recursive: true });
    await page.screenshot({ path: join(shots, 'report-desktop.png'), fullPage: true });
    expect((await stat(join(shots, 'report-desktop.png'))).size).toBeGreaterThan(10_000);
    expect(requests).toEqual([pathToFileURL(out).href]);
    expect(problems).toEqual([]);
  });

  it('draws every chart with one mark per figure of the views', async () => {
    const read = (): Promise<{ id: string; declared: number; marks: number; blank: number; shown: boolean }[]> =>
      page.$$eval('svg.chart', (svgs) =>
        svgs.map((s) => ({
          id: s.getAttribute('data-chart')!,
          declared: Number(s.getAttribute('data-marks')),
          marks: s.querySelectorAll('.mark').length,
          // Drawn: every mark with a positive value has a visible extent.
          blank: [...s.querySelectorAll('.mark')].filter((m) => {
            const b = (m as unknown as { getBBox(): { width: number; height: number } }).getBBox();
            return Number(m.getAttribute('data-value') ?? 1) > 0 && (b.width <= 0 || b.height <= 0);
          }).length,
          shown: s.getClientRects().length > 0,
        })),
      );
    // The growth panels of the periods not picked are hidden (nothing to measure): pick each in turn.
    const charts = new Map<string, Awaited<ReturnType<typeof read>>[number]>();
    for (const period of ['week', 'day', 'month']) {
      await page.click(`label[for="gp-${period}"]`);
      for (const c of await read()) if (c.shown || !charts.has(c.id)) charts.set(c.id, c);
    }
    const byId = charts;
    const e = expected;
    const statuses = new Set(e.growth.map((r) => r.status)).size;
    const want: Record<string, number> = {
      'growth-month': statuses,
      'growth-week': statuses,
      'growth-day': statuses,
      'campaign-rates': e.campaigns.flatMap((c) => [c.open_rate, c.click_rate, c.unsubscribe_rate]).filter((v) => v !== null).length,
      tags: e.taxonomy.filter((t) => t.kind === 'tag').length,
      lists: e.taxonomy.filter((t) => t.kind === 'list').length,
      'sync-runs': e.runs.filter((r) => r.duration_s !== null).length,
      'sync-rows': new Set(e.runs.map((r) => r.stream)).size,
      'sync-requests': new Set(e.runs.map((r) => r.stream)).size,
      'sync-freshness': e.freshness.filter((f) => f.last_success_at !== null).length,
      'webhook-lag': e.webhookLag.flatMap((d) => [d.delivery_lag_p50_s, d.delivery_lag_p95_s, d.apply_lag_p50_s]).filter((v) => v !== null).length,
    };
    for (const id of new Set(e.funnels.map((f) => f.funnel_id))) want[`funnel-${id}`] = e.funnels.filter((f) => f.funnel_id === id).length;
    expect(Object.keys(want).length).toBeGreaterThan(12);
    expect([...byId.keys()].sort()).toEqual(Object.keys(want).sort());
    for (const [id, n] of Object.entries(want)) {
      expect(n, id).toBeGreaterThan(0);
      expect(byId.get(id), id).toMatchObject({ marks: n, declared: n, blank: 0, shown: true });
    }
  });

  it('shows the figures the views hold, in the tables under the charts', async () => {
    const e = expected;
    const campaigns = await cellsOf(page, 'campaigns-table');
    expect(campaigns.map((r) => r.title)).toEqual(e.campaigns.map((c) => c.title));
    campaigns.forEach((r, i) => {
      const c = e.campaigns[i]!;
      for (const k of ['sent', 'opens', 'clicks', 'unsubscribes'] as const) expect(figure(r[k]!), `${c.title} ${k}`).toBe(c[k]);
      for (const k of ['open_rate', 'click_rate', 'unsubscribe_rate'] as const) expect(near(figure(r[k]!, 'rate'), c[k], 0.00051), `${c.title} ${k}: ${r[k]} vs ${c[k]}`).toBe(true);
    });
    expect(e.campaigns.some((c) => (c.unsubscribes ?? 0) > 0)).toBe(true);

    for (const id of new Set(e.funnels.map((f) => f.funnel_id))) {
      const steps = e.funnels.filter((f) => f.funnel_id === id);
      const shown = await cellsOf(page, `funnel-${id}-table`);
      expect(shown.map((s) => [s.label, figure(s.reached!), figure(s.dropped!)])).toEqual(steps.map((s) => [s.label, s.reached, s.dropped]));
      shown.forEach((s, i) => expect(near(figure(s.percent_of_entrants!), steps[i]!.percent_of_entrants, 0.05), s.label).toBe(true));
    }

    for (const kind of ['tag', 'list'] as const) {
      const shown = await cellsOf(page, `${kind}s-table`);
      const rows = e.taxonomy.filter((t) => t.kind === kind);
      expect(shown.map((s) => [s.title, figure(s.members!), figure(s.previous_members!), figure(s.change!), figure(s.crm_subscribers!)])).toEqual(
        rows.map((t) => [t.title, t.members, t.previous_members, t.change, t.crm_subscribers]),
      );
    }
    // ...and the view itself agrees with the CRM: tag 1 gained the 7 contacts tagged between the syncs.
    const tag1 = e.taxonomy.find((t) => t.kind === 'tag' && t.id === 1)!;
    expect(tag1).toMatchObject({ members: truthTag1.members, change: truthTag1.added });
    expect(e.taxonomy.find((t) => t.kind === 'tag' && t.id === 2)!.change).toBe(-3);

    const runs = await cellsOf(page, 'sync-runs-table');
    expect(runs.map((r) => [r.stream, r.status, figure(r.rows_read!), figure(r.requests!)])).toEqual(e.runs.map((r) => [r.stream, r.status, r.rows_read, r.requests]));
    runs.forEach((r, i) => expect(near(figure(r.duration_s!, 'seconds'), e.runs[i]!.duration_s, 0.05), `${r.stream} ${r.duration_s}`).toBe(true));

    const fresh = await cellsOf(page, 'sync-freshness-table');
    expect(fresh.map((f) => [f.stream, f.last_status, figure(f.runs!), figure(f.failed_runs!)])).toEqual(e.freshness.map((f) => [f.stream, f.last_status, f.runs, f.failed_runs]));

    const failures = await cellsOf(page, 'sync-failures-table');
    expect(failures.map((f) => [f.stream, f.error])).toEqual(e.failures.map((f) => [f.stream, f.error]));
    expect(failures[0]!.error).toMatch(/503 three times/);

    const lag = await cellsOf(page, 'webhook-lag-table');
    expect(lag.map((d) => [d.day, figure(d.deliveries!), figure(d.failed!)])).toEqual(e.webhookLag.map((d) => [d.day, d.deliveries, d.failed]));
    lag.forEach((d, i) => expect(near(figure(d.delivery_lag_p95_s!, 'seconds'), e.webhookLag[i]!.delivery_lag_p95_s, 0.05), d.day).toBe(true));
    expect(e.webhookLag.reduce((a, d) => a + d.deliveries, 0)).toBeGreaterThanOrEqual(7);
    const dead = await cellsOf(page, 'webhook-dead-letters-table');
    expect(dead.map((d) => [d.delivery_id, d.error])).toEqual(e.deadLetters.map((d) => [d.delivery_id, d.error]));

    for (const period of ['month', 'week', 'day'] as const) {
      const shown = await cellsOf(page, `growth-${period}-table`);
      const rows = e.growth.filter((g) => g.period === period);
      const starts = [...new Set(rows.map((g) => g.period_start))];
      expect(shown.map((s) => s.period_start)).toEqual(starts);
      for (const s of shown) {
        const mine = rows.filter((g) => g.period_start === s.period_start);
        for (const g of mine) expect(figure(s[`status:${g.status}`]!), `${period} ${g.period_start} ${g.status}`).toBe(g.total_contacts);
        expect(figure(s.new_contacts!)).toBe(mine.reduce((a, g) => a + g.new_contacts, 0));
      }
    }
  });

  it('switches the growth period, fits a phone and prints', async () => {
    const visible = (): Promise<string[]> => page.$$eval('.period-picker .panel', (ps) => ps.filter((p) => getComputedStyle(p).display !== 'none').map((p) => p.className));
    expect(await visible()).toEqual(['panel panel-month']);
    await page.click('label[for="gp-week"]');
    expect(await visible()).toEqual(['panel panel-week']);
    await page.screenshot({ path: join(shots, 'report-week.png') });
    await page.click('label[for="gp-month"]');

    await page.setViewport({ width: 375, height: 800, isMobile: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: join(shots, 'report-phone.png'), fullPage: true });

    await page.emulateMediaType('print');
    expect(await page.$$eval('button.copy', (bs) => bs.every((b) => getComputedStyle(b).display === 'none'))).toBe(true);
    const pdf = await page.pdf({ format: 'A4', printBackground: true });
    expect(Buffer.from(pdf).subarray(0, 5).toString()).toBe('%PDF-');
    await page.emulateMediaType('screen');
    expect(problems).toEqual([]);
  });
});
