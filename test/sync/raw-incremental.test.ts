import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSyncActivities } from '../../activities/sync-activities.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type RunningSimulator as Simulator } from '../../src/simulator/index.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { contactTablesSnapshot } from '../helpers/contact-tables.js';
import { countingCrmClient } from '../helpers/counting-crm-client.js';
import { differencesFromTruth } from './helpers/compare-truth.js';
import { editContacts } from './helpers/edit-contacts.js';

// Issue 19: the incremental contact paths (new contacts, the updated-first scan, membership
// repair, the sweep slice) hand their pages to DuckDB too. The simulator in real mode as the CRM
// (numeric strings, [] for {}, zone-less times in the site's zone), real DuckDB, a pinned clock.
const ZONE = 'America/New_York';
const PER_PAGE = 25;

function countingClient(sim: Simulator, edit?: Parameters<typeof countingCrmClient>[2]) {
  return countingCrmClient(sim, ZONE, edit);
}

async function withOwners<T>(n: number, fn: (owners: WarehouseOwner[]) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-raw-incremental-'));
  const owners: WarehouseOwner[] = [];
  try {
    for (let i = 0; i < n; i++) owners.push(await openWarehouseOwner({ dbPath: join(dir, `w${i}.duckdb`), lakePath: join(dir, `lake${i}`), siteTimeZone: ZONE }));
    return await fn(owners);
  } finally {
    for (const o of owners) await o.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One path's activities over its own warehouse, on the shared pinned clock. */
function path(sim: Simulator, writes: WarehouseOwner, contactPages: 'raw' | 'parsed', now: () => number, edit?: Parameters<typeof countingClient>[1]) {
  const { client, calls } = countingClient(sim, edit);
  const acts = createSyncActivities({ client, writes, logger: silentLogger, contactPages, publishEveryMs: 0, now });
  return {
    calls,
    async backfill() {
      const scan = await acts.startContactsScan({ mode: 'backfill', perPage: PER_PAGE, loadId: 'L1' });
      await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: scan.lastPage, perPage: PER_PAGE, expectedTotal: scan.total, loadId: 'L1' });
      await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'L1' });
    },
    /** The incremental run's contact activities, as the contacts flow calls them. */
    async incremental(loadId: string) {
      const fresh = await acts.fetchNewContacts({ perPage: PER_PAGE, loadId });
      const checks = await acts.refreshContacts({ perPage: PER_PAGE, loadId, overlapMs: 60_000, reprobeAfterMs: 3_600_000, sweepRuns: 3 });
      return { fresh, checks };
    },
  };
}

const snapshot = (writes: WarehouseOwner) => writes.run((w) => contactTablesSnapshot(w));

describe('incremental contact runs load raw pages (simulator in real mode, real DuckDB)', () => {
  it('load the same rows, history and memberships as the JavaScript path, parsing no page in JavaScript', async () => {
    let t = Date.parse('2026-11-20T15:00:00Z');
    const now = () => t;
    const sim = await startSimulator({ contacts: 180, seed: 43, mode: 'real', timezone: ZONE, now });
    try {
      await withOwners(2, async ([parsedOwner, rawOwner]) => {
        const viaJs = path(sim, parsedOwner!, 'parsed', now);
        const viaSql = path(sim, rawOwner!, 'raw', now);
        await viaJs.backfill();
        await viaSql.backfill();

        t += 10 * 60_000;
        const edits = editContacts(sim, 3);
        for (let i = 0; i < 30; i++) sim.mutate.createContact({ email: `raw-new-${i}@example.com`, status: 'subscribed', first_name: `New${i}` });
        t += 60_000;

        const before = { parsed: viaSql.calls.parsed, raw: viaSql.calls.raw };
        const a = await viaJs.incremental('L2');
        const b = await viaSql.incremental('L2');
        // Every contact page of the raw run went to DuckDB; none was parsed in JavaScript.
        expect(viaSql.calls.parsed - before.parsed).toBe(0);
        expect(viaSql.calls.raw - before.raw).toBeGreaterThanOrEqual(8);
        expect(viaJs.calls.raw).toBe(0);

        // Each check found its share, on both paths alike.
        expect(a.fresh).toMatchObject({ rows: 30, inserted: 30 });
        expect(a.checks.updated).toMatchObject({ ran: true, orderBroken: false, updated: edits.fields.length + edits.customValues.length });
        expect(a.checks.members.updated).toBe(edits.tagOnly.length + edits.listOnly.length);
        expect(a.checks.slice?.rows).toBeGreaterThan(0);
        expect(b.fresh).toEqual({ ...a.fresh, rejected: 0 });
        expect(b.checks.updated).toEqual({ ...a.checks.updated, rejected: 0 });
        expect(b.checks.members).toEqual(a.checks.members);
        expect(b.checks.slice).toEqual({ ...a.checks.slice, rejected: 0 });

        const [sa, sb] = [await snapshot(parsedOwner!), await snapshot(rawOwner!)];
        expect((sa.contacts as unknown[]).length).toBe(210);
        expect(sb).toEqual(sa);
        expect(await rawOwner!.run((w) => differencesFromTruth(w, sim.truth(), ['contacts']))).toEqual([]);
      });
    } finally {
      await sim.close();
    }
  });

  it('records rows of the updated-first scan that do not fit in _contact_rejects, and loads the rest', async () => {
    let t = Date.parse('2026-11-20T15:00:00Z');
    const now = () => t;
    const sim = await startSimulator({ contacts: 60, seed: 44, mode: 'real', timezone: ZONE, now });
    try {
      await withOwners(1, async ([owner]) => {
        let victim: number | undefined;
        // The updated-first scan's first page: the most recently edited contact's email is an object.
        const edit = (q: { page: number; order: string; orderBy: string }, body: string): string => {
          if (q.orderBy !== 'updated_at' || q.order !== 'desc' || q.page !== 1 || t < Date.parse('2026-11-20T15:05:00Z')) return body;
          const listing = JSON.parse(body) as { subscribers: { data: Array<Record<string, unknown>> } };
          const first = listing.subscribers.data[0]!;
          victim = Number(first.id);
          first.email = { address: 'nope' };
          return JSON.stringify(listing);
        };
        const raw = path(sim, owner!, 'raw', now, edit);
        await raw.backfill();
        t += 10 * 60_000;
        const ids = sim.truth().contacts.map((c) => c.id);
        sim.mutate.updateContact(ids[5]!, { first_name: 'Older edit' });
        t += 60_000;
        sim.mutate.updateContact(ids[9]!, { first_name: 'Newest edit' });
        t += 60_000;
        const { checks } = await raw.incremental('L2');
        expect(victim).toBe(ids[9]);
        expect(checks.updated).toMatchObject({ ran: true, rows: 2, updated: 1, rejected: 1 });
        const rejects = await owner!.run((w) => w.query(`SELECT page, position, contact_id, reason FROM _contact_rejects WHERE _load_id = 'L2'`));
        expect(rejects).toEqual([{ page: 1, position: 1, contact_id: String(ids[9]), reason: expect.stringContaining('email: expected a string') as unknown }]);
        expect(await owner!.run((w) => w.query(`SELECT first_name FROM contacts WHERE id = ${ids[5]}`))).toEqual([{ first_name: 'Older edit' }]);
      });
    } finally {
      await sim.close();
    }
  });
});
