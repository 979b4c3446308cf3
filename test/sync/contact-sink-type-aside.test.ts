import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import { createContactSink, type ContactSinkOptions, type ScannedPage } from '../../src/sync/contact-sink.js';
import type { WarehouseSession, WriteJobs } from '../../src/sync/warehouse-port.js';
import { openWarehouseOwner, type WarehouseOwner } from '../../src/warehouse/index.js';
import { scannedPages } from '../../src/warehouse/scan-tables.js';
import { contactTablesSnapshot } from '../helpers/contact-tables.js';
import { spyMethods } from '../helpers/spy-methods.js';

/** A raw listing page of 50 contacts from `from` as a range hands it to the sink; `tag` marks their version. */
function rawPage(no: number, from: number, tag = 'v1'): ScannedPage {
  const data = Array.from({ length: 50 }, (_, k) => ({ id: from + k, email: `c${from + k}@example.com`, first_name: tag, status: 'subscribed', tags: [], lists: [] }));
  const body = JSON.stringify({ subscribers: { total: 200, per_page: 50, current_page: no, data } });
  const rowSpans = scanContactPage(body, { page: no, perPage: 50 }, 'GET /subscribers').rowSpans!;
  return { scanKey: 'k', page: no, items: [], raw: { bodies: [body], rowSpans, rows: 50, ids: data.map((c) => c.id) }, reportedTotal: 200, loadId: 'L', syncedAt: new Date('2026-12-01T00:00:00Z') };
}

/** A gate a test opens (each is opened after the test too, so a failed test lets its owner close). */
const gates: (() => void)[] = [];
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((r) => (open = r));
  gates.push(open);
  return { wait, open };
}

/**
 * `owner`'s jobs with the sink's contact loads and typings noted in `calls`, in order, and each
 * load of raw pages the writer does itself held until `hold` lets it go.
 */
function watched(owner: WarehouseOwner, calls: string[], hold: () => Promise<void>): WriteJobs {
  const pagesOf = (a: unknown) => (a as { page: number }[]).map((p) => p.page).join(',');
  const spy = (w: WarehouseSession): WarehouseSession =>
    spyMethods(w, {
      loadContactPages: async (fn, ...a) => {
        calls.push(`load ${pagesOf(a[0])}`);
        await hold();
        return fn(...a);
      },
      typeContactPagesAside: async (fn, ...a) => {
        calls.push(`type aside ${pagesOf(a[0])}`);
        const typed = await fn(...a);
        calls.push('typed');
        return typed;
      },
      loadTypedContactPages: (fn, ...a) => {
        calls.push(`load typed ${(a[0] as { pages: number[] }).pages.join(',')}`);
        return fn(...a);
      },
    });
  return { run: (job) => owner.run((w) => job(spy(w))) };
}

const owners: WarehouseOwner[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const o of owners.splice(0)) await o.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function newOwner(): Promise<WarehouseOwner> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-aside-'));
  dirs.push(dir);
  const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
  owners.push(owner);
  return owner;
}

const SINK: ContactSinkOptions = { maxRowsPerLoad: 50, minRowsPerLoad: 50, maxHeldRows: 1_000, lingerMs: 0, publishColdBucketsAfterMs: false };
const typedLeft = (owner: WarehouseOwner) =>
  owner.run(async (w) => Number((await w.query(`SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = 'memory' AND schema_name = '_crmsync_typing'`))[0]!.n));

/** A sink over a new owner whose loads of raw pages wait for `held`, its calls noted in `calls`. */
async function heldSink() {
  const owner = await newOwner();
  const calls: string[] = [];
  const held = gate();
  const sink = createContactSink(
    watched(owner, calls, () => held.wait),
    SINK,
  );
  return { owner, calls, held, sink };
}

/** Waits (up to 20 s, in steps of 10 ms: a busy machine) until `done()`. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('contact sink: typing the next load aside (real DuckDB)', () => {
  it('types the next full load of raw pages while the writer loads the one before, and loads what typing in the load would', async () => {
    const { owner, calls, held, sink } = await heldSink();
    // Page 1 loads (held); pages 2 and 3 wait meanwhile; page 4 is page 1's contacts again, changed: the later page wins.
    const pages = [rawPage(1, 1), rawPage(2, 51), rawPage(3, 101), rawPage(4, 1, 'v2')];
    const added = pages.map((p) => sink.add(p));
    await until(() => calls.includes('typed'));
    // Page 2 was typed aside, as page 1's load began, and done while the writer still held that load.
    expect(calls).toEqual(['type aside 2', 'load 1', 'typed']);
    held.open();
    const stats = await Promise.all(added);
    expect(stats.reduce((n, s) => n + s.inserted, 0)).toBe(150);
    expect(stats.reduce((n, s) => n + s.updated, 0)).toBe(50);
    expect(calls.filter((c) => c.startsWith('load'))).toEqual(['load 1', 'load typed 2', 'load typed 3', 'load typed 4']);
    expect(await owner.run((w) => scannedPages(w, 'k'))).toEqual([1, 2, 3, 4]);
    expect(await owner.run((w) => w.query(`SELECT count(*) AS n FROM contacts WHERE first_name = 'v2'`))).toEqual([{ n: 50 }]);
    expect(await typedLeft(owner)).toBe(0);

    // The same pages through a sink that never types aside leave the same tables.
    const inline = await newOwner();
    const plain = createContactSink(inline, { ...SINK, typeAside: false });
    await Promise.all(pages.map((p) => plain.add(p)));
    const snapshot = (o: WarehouseOwner) => o.run((w) => contactTablesSnapshot(w));
    expect(await snapshot(owner)).toEqual(await snapshot(inline));
  });

  it('leaves pages whose typing aside failed to their own load, which fails them alone with the page error', async () => {
    const { owner, calls, held, sink } = await heldSink();
    const bad: ScannedPage = { ...rawPage(2, 51), raw: { bodies: ['{"subscribers": {"data": [{"id": 51'], rows: 50, ids: [51] } };
    const first = sink.add(rawPage(1, 1));
    const second = sink.add(bad);
    const third = sink.add(rawPage(3, 101));
    await until(() => calls.length >= 2);
    expect(calls).toEqual(['type aside 2', 'load 1']);
    held.open();
    await expect(second).rejects.toMatchObject({ code: 'WAREHOUSE_PAGE_UNREADABLE' });
    expect((await first).inserted).toBe(50);
    expect((await third).inserted).toBe(50);
    // The failed typing was not taken for the load: the pages were typed again in it, and failed there.
    expect(calls).toContain('load 2');
    expect(await owner.run((w) => scannedPages(w, 'k'))).toEqual([1, 3]);
    expect(await typedLeft(owner)).toBe(0);
  });
});
