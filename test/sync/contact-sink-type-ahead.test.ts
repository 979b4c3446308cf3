import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createContactSink, type ScannedPage } from '../../src/sync/contact-sink.js';
import type { WriteJobs } from '../../src/sync/warehouse-port.js';
import { scannedPages } from '../../src/warehouse/scan-tables.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { makeContact } from '../warehouse/contact-factory.js';

/** A raw listing page of contacts `from`..`from + n - 1` (or of `data`), as the CRM sends it. */
function rawPage(page: number, from: number, n: number, data = Array.from({ length: n }, (_, i) => makeContact(from + i))): ScannedPage {
  const body = JSON.stringify({ subscribers: { total: 1_000, per_page: n, current_page: page, data } });
  return { scanKey: 'k', page, items: [], raw: { bodies: [body], rows: n, ids: data.map((c) => c.id) }, reportedTotal: 1_000, loadId: 'L', syncedAt: new Date() };
}

let owner: WarehouseOwner | undefined;
let dir: string | undefined;
/** Lets a held load go (so the owner can close even when a test fails while it is held). */
let openGate = (): void => undefined;
afterEach(async () => {
  openGate();
  await owner?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  owner = undefined;
  dir = undefined;
});

async function openOwner(): Promise<WarehouseOwner> {
  dir = await mkdtemp(join(tmpdir(), 'crmsync-type-ahead-'));
  owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  return owner;
}

describe('contact sink with an owner that types ahead', () => {
  it('types the next batch while the writer is still busy with the one before, and loads both in order with their page log', async () => {
    const inner = await openOwner();
    const events: string[] = [];
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let loadJobs = 0;
    const writes: WriteJobs = {
      run: (job) =>
        inner.run(async (w) => {
          const n = ++loadJobs;
          events.push(`load ${n} start`);
          // The first load stays on the writer until the test lets it go.
          if (n === 1) await gate;
          const result = await job(w);
          events.push(`load ${n} end`);
          return result;
        }),
      typeAhead: (job) =>
        inner.typeAhead(async (t) => {
          const result = await job(t);
          events.push('typed');
          return result;
        }),
    };
    const sink = createContactSink(writes, { maxRowsPerLoad: 50, publishColdBucketsAfterMs: false });
    const first = sink.add(rawPage(1, 1, 50));
    // Wait until the first batch is on the writer.
    for (let i = 0; i < 200 && !events.includes('load 1 start'); i++) await new Promise((r) => setTimeout(r, 5));
    // Contacts 51-99, then a page that repeats contact 50 with another email: the later page wins.
    const second = sink.add(rawPage(2, 51, 49));
    const third = sink.add(rawPage(3, 50, 1, [makeContact(50, { email: 'moved@example.com' })]));
    for (let i = 0; i < 400 && events.filter((e) => e === 'typed').length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    // The next batch was typed while the first load still held the writer.
    expect(events).toEqual(['typed', 'load 1 start', 'typed']);
    openGate();
    const stats = await Promise.all([first, second, third]);
    expect(stats.reduce((n, s) => n + s.inserted, 0)).toBe(99);
    expect(stats.reduce((n, s) => n + s.updated, 0)).toBe(1);
    expect(events.slice(3)).toEqual(['load 1 end', 'load 2 start', 'load 2 end']);
    expect(await inner.run((w) => scannedPages(w, 'k'))).toEqual([1, 2, 3]);
    const rows = await inner.run((w) => w.query('SELECT count(*) AS n, count(DISTINCT id) AS d, max(id) AS top FROM contacts'));
    expect(rows.map((r) => [Number(r.n), Number(r.d), Number(r.top)])).toEqual([[99, 99, 99]]);
    expect(await inner.run((w) => w.query('SELECT email FROM contacts WHERE id = 50'))).toEqual([{ email: 'moved@example.com' }]);
    // Nothing typed is left waiting in memory once its load is done.
    expect(await inner.run((w) => w.query(`SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = '_crmsync_typing'`))).toEqual([{ n: 0 }]);
  });

  it('loads nothing and records no page of a batch whose typed rows never reach the writer, and drops them', async () => {
    const inner = await openOwner();
    let typed = 0;
    const writes: WriteJobs = {
      run: () => Promise.reject(new Error('the writer is gone')),
      typeAhead: (job) => inner.typeAhead((t) => job(t).finally(() => typed++)),
    };
    const sink = createContactSink(writes, { publishColdBucketsAfterMs: false });
    await expect(sink.add(rawPage(1, 1, 20))).rejects.toThrow('the writer is gone');
    expect(sink.heldRows).toBe(0);
    expect(typed).toBe(1);
    for (let i = 0; i < 200; i++) {
      const left = await inner.run((w) => w.query(`SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = '_crmsync_typing'`));
      if (Number(left[0]?.n) === 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await inner.run((w) => w.query(`SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = '_crmsync_typing'`))).toEqual([{ n: 0 }]);
    expect(await inner.run((w) => scannedPages(w, 'k'))).toEqual([]);
    expect(await inner.run((w) => w.query('SELECT count(*) AS n FROM contacts'))).toEqual([{ n: 0 }]);
  });
});
