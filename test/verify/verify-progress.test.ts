import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatVerifyProgress, verifyProgressPrinter } from '../../src/cli/verify.js';
import { loadConfig } from '../../src/config.js';
import { crmClientFromConfig, type CrmClient } from '../../src/crm/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { runVerify } from '../../src/verify/run-verify.js';
import type { VerifyProgress } from '../../src/verify/verify-deps.js';

let sim: RunningSimulator;
let client: CrmClient;

beforeAll(async () => {
  // Seed 7: four funnels, one without subscribers, the others over two pages of 100.
  sim = await startSimulator({ seed: 7, contacts: 300 });
  client = crmClientFromConfig(loadConfig({ CRM_BASE_URL: sim.baseUrl, CRM_USERNAME: sim.credentials.username, CRM_PASSWORD: sim.credentials.password }));
});
afterAll(async () => {
  await client?.close();
  await sim?.close();
});

/** Progress of verifying funnel subscribers against an empty warehouse (the differences do not matter here). */
async function funnelSubscriberProgress(): Promise<VerifyProgress[]> {
  const seen: VerifyProgress[] = [];
  await runVerify({ client, read: (fn) => fn({ query: () => Promise.resolve([]) }), onProgress: (p) => seen.push(p) }, ['funnel_subscribers']);
  return seen.filter((p) => p.stream === 'funnel_subscribers');
}

// `crmsync verify` printed "funnel_subscribers: page 1/1, 0 rows read", then "page 2/2": each
// funnel's listing starts at page 1 again, and its rows were counted from 0 again, so one stream's
// progress went back and forth and seemed to pass its last page.
describe('verify progress of funnel subscribers', () => {
  it('names the funnel each page belongs to and counts rows over the whole stream', async () => {
    const funnels = sim.truth().funnels.length;
    const events = await funnelSubscriberProgress();
    expect(events.length).toBeGreaterThan(funnels);
    for (const [i, p] of events.entries()) {
      expect(p.listing, JSON.stringify(p)).toMatchObject({ noun: 'funnel', total: funnels });
      expect(p.pagesDone).toBeLessThanOrEqual(p.pagesTotal ?? Infinity);
      const before = events[i - 1];
      if (!before) continue;
      expect(p.rows, `rows read went from ${before.rows} to ${p.rows}`).toBeGreaterThanOrEqual(before.rows);
      // Within one funnel the pages go up; a new funnel starts at page 1.
      if (p.listing!.done === before.listing!.done) expect(p.pagesDone).toBe(before.pagesDone + 1);
      else expect([p.listing!.done, p.pagesDone]).toEqual([before.listing!.done + 1, 1]);
    }
    const last = events[events.length - 1]!;
    expect(last.listing!.done).toBe(funnels);
    expect(last.rows).toBe(sim.truth().funnelSubscribers.length);
  });

  it('prints which funnel a page is of, at the start of a stream and every tenth page of it', () => {
    const lines: string[] = [];
    const print = verifyProgressPrinter((l) => lines.push(l));
    print({ stream: 'funnels', pagesDone: 1, pagesTotal: 1, rows: 4 });
    for (let i = 1; i <= 12; i++) print({ stream: 'funnel_subscribers', listing: { noun: 'funnel', done: i, total: 12 }, pagesDone: 1, pagesTotal: 1, rows: i * 3 });
    expect(lines).toEqual([
      'verify funnels: page 1/1, 4 rows read\n',
      'verify funnel_subscribers: funnel 1/12, page 1/1, 3 rows read\n',
      'verify funnel_subscribers: funnel 10/12, page 1/1, 30 rows read\n',
    ]);
    expect(formatVerifyProgress({ stream: 'contacts', pagesDone: 3, pagesTotal: undefined, rows: 1500 })).toBe('verify contacts: page 3, 1,500 rows read');
  });

  it('names an empty listing, which real sites answer with last_page 0, page 1/1', () => {
    const p = { stream: 'funnel_subscribers', listing: { noun: 'funnel', done: 1, total: 4 }, pagesDone: 1, pagesTotal: 0, rows: 0 };
    expect(formatVerifyProgress(p)).toBe('verify funnel_subscribers: funnel 1/4, page 1/1, 0 rows read');
  });
});
