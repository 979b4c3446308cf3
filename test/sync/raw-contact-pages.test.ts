import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createContactActivities } from '../../activities/sync-contacts.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type RunningSimulator as Simulator } from '../../src/simulator/index.js';
import type { SyncCrmClient } from '../../src/sync/crm-port.js';
import { openWarehouseOwner, type WarehouseHandle, type WarehouseOwner } from '../../src/warehouse/index.js';
import type { ContactPage } from '../../src/warehouse/load-contact-pages.js';
import type { LoadContext } from '../../src/warehouse/types.js';
import { contactTablesSnapshot } from '../helpers/contact-tables.js';
import { countingCrmClient } from '../helpers/counting-crm-client.js';

const ZONE = 'America/New_York';

/** The simulator's client, with the contact page requests of each kind counted and raw bodies passed through `edit`. */
function countingClient(sim: Simulator, edit?: (page: number, body: string) => string) {
  return countingCrmClient(sim, ZONE, edit && ((q, body) => edit(q.page, body)));
}

/** A whole contact scan through the activities, called directly: probe, every page in one range, finish. */
async function scanAll(client: SyncCrmClient, writes: WarehouseOwner, contactPages: 'raw' | 'parsed') {
  const acts = createContactActivities({ client, writes, logger: silentLogger, contactPages, publishEveryMs: 0 });
  const scan = await acts.startContactsScan({ mode: 'backfill', perPage: 25, loadId: 'L1' });
  const pages = await acts.syncContactPages({ scanKey: scan.scanKey, fromPage: 1, toPage: scan.lastPage, perPage: 25, expectedTotal: scan.total, loadId: 'L1' });
  const finish = await acts.finishContactsScan({ scanKey: scan.scanKey, loadId: 'L1' });
  return { pages, finish };
}

/** `writes`, counting the pages its jobs hand to loadContactPages with the scan's row spans and without. */
function countingSpans(writes: WarehouseOwner): { owner: WarehouseOwner; handed: { spans: number; bodies: number } } {
  const handed = { spans: 0, bodies: 0 };
  const spy = (w: WarehouseHandle): WarehouseHandle =>
    new Proxy(w, {
      get(target, key) {
        if (key === 'loadContactPages') {
          return (pages: readonly ContactPage[], ctx: LoadContext) => {
            for (const p of pages) handed[p.rowSpans ? 'spans' : 'bodies']++;
            return target.loadContactPages(pages, ctx);
          };
        }
        const v = Reflect.get(target, key, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  const owner: WarehouseOwner = {
    dbPath: writes.dbPath,
    get pending() {
      return writes.pending;
    },
    run: (job) => writes.run((w) => job(spy(w))),
    close: () => writes.close(),
  };
  return { owner, handed };
}

async function snapshot(writes: WarehouseOwner): Promise<Record<string, unknown>> {
  return writes.run((w) => contactTablesSnapshot(w));
}

async function withOwners<T>(n: number, fn: (owners: WarehouseOwner[]) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-raw-pages-'));
  const owners: WarehouseOwner[] = [];
  try {
    for (let i = 0; i < n; i++) owners.push(await openWarehouseOwner({ dbPath: join(dir, `w${i}.duckdb`), lakePath: join(dir, `lake${i}`), siteTimeZone: ZONE }));
    return await fn(owners);
  } finally {
    for (const o of owners) await o.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('contact scans load raw pages (simulator in real mode, real DuckDB)', () => {
  it('loads what the JavaScript path loads, from the real deployment’s shapes, without parsing a page in JavaScript', async () => {
    // Real mode: ids and counts as numeric strings, [] for {}, zone-less times in the site's zone, custom_fields.
    const sim = await startSimulator({ contacts: 180, seed: 41, mode: 'real', timezone: ZONE });
    try {
      await withOwners(2, async ([parsedOwner, rawOwner]) => {
        const viaJs = countingClient(sim);
        const viaSql = countingClient(sim);
        const a = await scanAll(viaJs.client, parsedOwner!, 'parsed');
        const spying = countingSpans(rawOwner!);
        const b = await scanAll(viaSql.client, spying.owner, 'raw');
        // Each page with the row spans its scan found: DuckDB does not parse a body to find the rows.
        expect(spying.handed).toEqual({ spans: 8, bodies: 0 });
        // Pages raw; only the two one-row probes (start and finish of the scan) are parsed.
        expect(viaSql.calls).toEqual({ parsed: 2, raw: 8 });
        expect(viaJs.calls).toEqual({ parsed: 10, raw: 0 });
        expect(b.pages).toMatchObject({ pages: 8, rows: 180, inserted: 180, rejected: 0, drift: false });
        expect({ ...b.pages, requests: 0 }).toEqual({ ...a.pages, requests: 0 });
        expect(b.finish).toEqual(a.finish);
        const [sa, sb] = [await snapshot(parsedOwner!), await snapshot(rawOwner!)];
        expect((sa.contacts as unknown[]).length).toBe(180);
        expect(sb).toEqual(sa);
      });
    } finally {
      await sim.close();
    }
  });

  it('records rows that do not fit in _contact_rejects, loads the rest, and reports the count', async () => {
    const sim = await startSimulator({ contacts: 60, seed: 7, mode: 'real', timezone: ZONE });
    try {
      await withOwners(1, async ([owner]) => {
        const victims: number[] = [];
        // Page 2: one row's id is not a number, another's email is an object.
        const { client } = countingClient(sim, (page, body) => {
          if (page !== 2) return body;
          const listing = JSON.parse(body) as { subscribers: { data: Array<Record<string, unknown>> } };
          const [first, second] = listing.subscribers.data;
          victims.push(Number(first!.id), Number(second!.id));
          first!.id = 'x1';
          second!.email = { address: 'nope' };
          return JSON.stringify(listing);
        });
        const { pages } = await scanAll(client, owner!, 'raw');
        expect(pages).toMatchObject({ rejected: 2, inserted: 58 });
        const rejects = await owner!.run((w) => w.query('SELECT page, position, contact_id AS id, reason FROM _contact_rejects ORDER BY position'));
        expect(rejects).toEqual([
          { page: 2, position: 1, id: 'x1', reason: expect.stringContaining('id: expected an integer or numeric string') as unknown },
          { page: 2, position: 2, id: String(victims[1]), reason: expect.stringContaining('email: expected a string') as unknown },
        ]);
        const held = await owner!.run((w) => w.query(`SELECT count(*) AS n, count(*) FILTER (WHERE id IN (${victims.join(', ')})) AS victims FROM contacts WHERE _deleted_at IS NULL`));
        // Neither is loaded: a backfill confirms only contacts it held before, and held none.
        expect(held).toEqual([{ n: 58, victims: 0 }]);
      });
    } finally {
      await sim.close();
    }
  });
});
