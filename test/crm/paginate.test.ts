import { describe, expect, it } from 'vitest';
import { type DriftEvent, type Page, paginate } from '../../src/crm/index.js';
import { readPageEnvelope } from '../../src/crm/parse.js';
import { withSimClient } from './helpers/sim-client.js';

type Row = { id: number };

/** A listing over a mutable array, like the server's OFFSET pagination. */
function listing(rows: Row[], opts: { withLastPage?: boolean; onFetch?: (page: number) => void; delayMs?: number } = {}) {
  const calls: number[] = [];
  const fetchPage = async (page: number, perPage: number): Promise<Page<Row>> => {
    calls.push(page);
    opts.onFetch?.(page);
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    const items = rows.slice((page - 1) * perPage, page * perPage);
    const withLast = opts.withLastPage ?? true;
    return { items, total: withLast ? rows.length : undefined, perPage, currentPage: page, lastPage: withLast ? Math.ceil(rows.length / perPage) : undefined };
  };
  return { fetchPage, calls };
}

const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ({ id: from + i }));

async function collect<T>(it: AsyncIterable<Page<T>>): Promise<Page<T>[]> {
  const out: Page<T>[] = [];
  for await (const p of it) out.push(p);
  return out;
}

describe('paginate', () => {
  it('fetches ahead in parallel once last_page is known and yields in order, without drift on a still listing', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const l = listing(ids(95), { delayMs: 10 });
    const wrapped = async (p: number, pp: number) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        return await l.fetchPage(p, pp);
      } finally {
        inFlight--;
      }
    };
    const drift: DriftEvent[] = [];
    const pages = await collect(paginate(wrapped, { perPage: 10, concurrency: 4, onDrift: (e) => drift.push(e), order: 'asc' }));
    expect(pages.map((p) => p.currentPage)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(pages.flatMap((p) => p.items.map((r) => r.id))).toEqual(ids(95).map((r) => r.id));
    expect(maxInFlight).toBeGreaterThan(1);
    expect(maxInFlight).toBeLessThanOrEqual(4);
    expect(drift).toEqual([]);
    expect(pages.every((p) => p.drift === undefined)).toBe(true);
  });

  it('without page metadata reads until a short page, and stops if the server ignores `page`', async () => {
    const l = listing(ids(25), { withLastPage: false });
    const pages = await collect(paginate(l.fetchPage, { perPage: 10 }));
    expect(pages.map((p) => p.items.length)).toEqual([10, 10, 5]);
    const same = async (): Promise<Page<Row>> => ({ items: ids(10), total: undefined, perPage: 10, currentPage: 1, lastPage: undefined });
    const drift: DriftEvent[] = [];
    const loop = await collect(paginate(same, { perPage: 10, onDrift: (e) => drift.push(e) }));
    expect(loop.length).toBe(2);
    expect(drift[0]?.kind).toBe('overlap');
  });

  it('reports an insert ahead of the scan (desc order): total change and the repeated boundary row', async () => {
    const rows = ids(30).reverse();
    const l = listing(rows, {
      onFetch: (page) => {
        if (page === 2) rows.unshift({ id: 31 }); // a new contact arrives while page 2 is read
      },
    });
    const drift: DriftEvent[] = [];
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, onDrift: (e) => drift.push(e), order: 'desc' }));
    expect(drift.map((d) => d.kind)).toEqual(expect.arrayContaining(['total_changed', 'overlap']));
    const overlap = drift.find((d) => d.kind === 'overlap')!;
    expect(overlap.ids).toEqual([21]);
    expect(pages.find((p) => p.currentPage === overlap.page)?.drift).toContainEqual(overlap);
    // The listing grew past its first last_page: the extra page is read too.
    expect(pages.at(-1)!.currentPage).toBe(4);
  });

  it('reports a delete behind the scan (asc order): the skipped row lies in the reported gap window', async () => {
    const rows = ids(30);
    const l = listing(rows, {
      onFetch: (page) => {
        if (page === 2) rows.splice(0, 1); // id 1 deleted after page 1 was read: id 11 slides onto page 1
      },
    });
    const drift: DriftEvent[] = [];
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, onDrift: (e) => drift.push(e), order: 'asc' }));
    const seen = new Set(pages.flatMap((p) => p.items.map((r) => r.id)));
    expect(seen.has(11)).toBe(false); // the row that was skipped...
    expect(drift.map((d) => d.kind)).toEqual(['total_changed', 'gap']); // ...is not skipped silently
    const gap = drift.find((d) => d.kind === 'gap')!;
    expect(gap.ids).toEqual([10, 12]);
    expect(gap).toMatchObject({ afterId: 10, beforeId: 12 });
    expect(gap.page).toBe(2);
  });

  it('verifyBoundaries re-reads the previous page and recovers the skipped row', async () => {
    const rows = ids(30);
    const l = listing(rows, {
      onFetch: (page) => {
        if (page === 2 && rows[0]!.id === 1) rows.splice(0, 1);
      },
    });
    const drift: DriftEvent[] = [];
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, onDrift: (e) => drift.push(e), order: 'asc', verifyBoundaries: true }));
    const seen = pages.flatMap((p) => p.items.map((r) => r.id));
    expect(new Set(seen)).toEqual(new Set(ids(30).map((r) => r.id)));
    expect(drift).toContainEqual(expect.objectContaining({ kind: 'recovered', page: 2, ids: [11] }));
    expect(l.calls).toEqual([1, 2, 3, 1, 2]); // page 3 is fetched ahead; each re-read follows the page after it
    await expect(collect(paginate(l.fetchPage, { perPage: 10, concurrency: 2, verifyBoundaries: true }))).rejects.toThrow(/verifyBoundaries/);
  });

  it('verifyBoundaries recovers the rows of a last page that came back empty because they all slid back', async () => {
    const rows = ids(22);
    let deleted = false;
    const l = listing(rows, {
      onFetch: (page) => {
        // Page 1 said there are 3 pages; before page 3 is read, two rows of page 1 go away, so
        // rows 21 and 22 move onto page 2 (already read) and page 3 comes back empty.
        if (page === 3 && !deleted) {
          rows.splice(0, 2);
          deleted = true;
        }
      },
    });
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, order: 'asc', verifyBoundaries: true }));
    const seen = new Set(pages.flatMap((p) => p.items.map((r) => r.id)));
    expect([...seen].filter((id) => id > 2).sort((a, b) => a - b)).toEqual(ids(20, 3).map((r) => r.id));
    expect(pages.at(-1)?.drift).toContainEqual(expect.objectContaining({ kind: 'recovered', page: 3, ids: [21, 22] }));
  });

  it('flags ids out of the requested order at a boundary', async () => {
    const pagesData: Row[][] = [
      [{ id: 1 }, { id: 5 }],
      [{ id: 3 }, { id: 9 }],
    ];
    const fetchPage = async (page: number, perPage: number): Promise<Page<Row>> => ({ items: pagesData[page - 1] ?? [], total: 4, perPage, currentPage: page, lastPage: 2 });
    const drift: DriftEvent[] = [];
    await collect(paginate(fetchPage, { perPage: 2, order: 'asc', onDrift: (e) => drift.push(e) }));
    expect(drift).toEqual([expect.objectContaining({ kind: 'order_violation', page: 2, ids: [5, 3] })]);
  });

  it('resumes from a start page, stops at maxPages, and stops requesting when the consumer breaks', async () => {
    const l = listing(ids(100));
    const resumed = await collect(paginate(l.fetchPage, { perPage: 10, startPage: 7, concurrency: 3 }));
    expect(resumed.map((p) => p.currentPage)).toEqual([7, 8, 9, 10]);
    const capped = await collect(paginate(l.fetchPage, { perPage: 10, maxPages: 2 }));
    expect(capped.map((p) => p.currentPage)).toEqual([1, 2]);
    const early = listing(ids(1000), { delayMs: 5 });
    for await (const p of paginate(early.fetchPage, { perPage: 10, concurrency: 4 })) {
      if (p.currentPage === 2) break;
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(early.calls.length).toBeLessThanOrEqual(2 + 4 * 4); // the look-ahead window, not all 100 pages
  });

  it('a failed page surfaces to the caller', async () => {
    const fetchPage = async (page: number, perPage: number): Promise<Page<Row>> => {
      if (page === 3) throw new Error('boom');
      return { items: ids(perPage, (page - 1) * perPage + 1), total: 50, perPage, currentPage: page, lastPage: 5 };
    };
    await expect(collect(paginate(fetchPage, { perPage: 10, concurrency: 3 }))).rejects.toThrow('boom');
  });
});

describe('page envelopes', () => {
  const req = { page: 2, perPage: 10 };
  it('reads the paginator, its subsets, top-level keys, pagination objects and plain arrays', () => {
    const paginator = { subscribers: { total: 25, per_page: 10, current_page: 2, last_page: 3, data: [{ id: 1 }] } };
    expect(readPageEnvelope(paginator, ['subscribers'], req, 'r')).toMatchObject({ total: 25, perPage: 10, currentPage: 2, lastPage: 3, items: [{ id: 1 }] });
    const subset = { notes: { current_page: '2', per_page: '10', total: '25', data: [] } };
    expect(readPageEnvelope(subset, ['notes'], req, 'r')).toMatchObject({ total: 25, lastPage: 3, items: [] });
    const funnels = { funnels: [{ id: 1 }], total: 11, per_page: 10, current_page: 2, last_page: 2 };
    expect(readPageEnvelope(funnels, ['funnels'], req, 'r')).toMatchObject({ total: 11, lastPage: 2, items: [{ id: 1 }] });
    const deliveries = { deliveries: [{ id: 7 }], pagination: { total: 12, per_page: 10, current_page: 2, last_page: 2 } };
    expect(readPageEnvelope(deliveries, ['deliveries'], req, 'r')).toMatchObject({ total: 12, lastPage: 2, items: [{ id: 7 }] });
    const realLists = { lists: [{ id: 3 }], pagination: { total: 3 } };
    expect(readPageEnvelope(realLists, ['lists'], req, 'r')).toMatchObject({ total: 3, perPage: 10, currentPage: 2, lastPage: 1 });
    expect(readPageEnvelope([{ id: 1 }, { id: 2 }], ['x'], req, 'r')).toMatchObject({ total: undefined, lastPage: undefined, items: [{ id: 1 }, { id: 2 }] });
    const emptyReal = { templates: { total: 0, per_page: 15, current_page: 1, last_page: 0, from: null, to: null, data: [] } };
    expect(readPageEnvelope(emptyReal, ['templates'], req, 'r')).toMatchObject({ total: 0, lastPage: 0, items: [] });
    expect(() => readPageEnvelope({ other: 1 }, ['subscribers'], req, 'GET /subscribers')).toThrow(/GET \/subscribers/);
  });
});

describe('drift during a churning scan of the simulator', () => {
  const scenarios = [
    { name: 'inserts and deletes, newest first', order: 'desc' as const, concurrency: 1, churn: { insertsPerSec: 150, deletesPerSec: 100 } },
    { name: 'deletes only, oldest first', order: 'asc' as const, concurrency: 1, churn: { deletesPerSec: 250 } },
    { name: 'deletes only, oldest first, boundaries verified', order: 'asc' as const, concurrency: 1, verify: true, churn: { deletesPerSec: 250 } },
    // Pages fetched in parallel may be served out of order: repeats are still caught, but a skip whose
    // inserts and deletes cancel out in the totals can pass unseen (reconciliation catches those).
    { name: 'inserts and deletes, newest first, 4 pages at a time', order: 'desc' as const, concurrency: 4, churn: { insertsPerSec: 300, deletesPerSec: 300 } },
  ];
  for (const sc of scenarios) {
    const guarantee = sc.concurrency === 1 ? 'repeats are reported as overlaps and every skipped contact lies in a reported gap' : 'repeats are reported as overlaps';
    it(`${sc.name}: ${guarantee}`, async () => {
      await withSimClient({ contacts: 400, seed: 11, faults: { latencyMs: { min: 6, max: 10 } } }, async (sim, client) => {
        const before = new Set(sim.truth().contacts.map((c) => c.id));
        const churn = sim.churn({ ...sc.churn, tickMs: 10 });
        const drift: DriftEvent[] = [];
        const seen = new Set<number>();
        const repeated: number[] = [];
        try {
          for await (const page of client.paginate((p, pp) => client.contacts.listPage({ page: p, perPage: pp, order: sc.order, orderBy: 'id' }), {
            perPage: 20,
            concurrency: sc.concurrency,
            verifyBoundaries: 'verify' in sc,
            order: sc.order,
            onDrift: (e) => drift.push(e),
          })) {
            for (const c of page.items) {
              if (seen.has(c.id)) repeated.push(c.id);
              seen.add(c.id);
            }
          }
        } finally {
          await churn.stop();
        }
        const after = new Set(sim.truth().contacts.map((c) => c.id));
        const missed = [...before].filter((id) => after.has(id) && !seen.has(id));
        expect(churn.counts().inserts + churn.counts().deletes).toBeGreaterThan(10);
        // A sequential scan with latency always sees the total move; a parallel one may finish between ticks.
        if (sc.concurrency === 1) expect(drift.some((d) => d.kind === 'total_changed')).toBe(true);
        if ('verify' in sc) {
          // Verified boundaries repair the skips instead of only reporting them.
          expect(missed).toEqual([]);
          expect(drift.some((d) => d.kind === 'recovered')).toBe(true);
          return;
        }
        if (sc.order === 'asc') expect(missed.length).toBeGreaterThan(0); // the scenario does skip rows
        const reportedOverlap = new Set(drift.filter((d) => d.kind === 'overlap').flatMap((d) => d.ids ?? []));
        for (const id of repeated) expect(reportedOverlap.has(id)).toBe(true);
        // In scan order a gap covers ids after `afterId` and before `beforeId` (open-ended at the end).
        const inGap = (id: number, d: DriftEvent) => {
          const after = Number(d.afterId);
          const before = d.beforeId === undefined ? undefined : Number(d.beforeId);
          return sc.order === 'asc' ? id > after && (before === undefined || id < before) : id < after && (before === undefined || id > before);
        };
        const gaps = drift.filter((d) => d.kind === 'gap');
        if (sc.concurrency > 1) return;
        for (const id of missed)
          expect(
            gaps.some((g) => inGap(id, g)),
            `missed ${id} outside every gap ${JSON.stringify(gaps.map((g) => [g.afterId, g.beforeId]))}`,
          ).toBe(true);
      });
    });
  }

  // Sequential, so the simulator's seeded fault draws come in the same order on every run.
  it('a full scan survives dropped connections through the one resend of a reset read', async () => {
    await withSimClient({ contacts: 300, seed: 13, faults: { dropRate: 0.1 } }, async (sim, client) => {
      const seen: number[] = [];
      for await (const page of client.paginate((p, pp) => client.contacts.listPage({ page: p, perPage: pp, order: 'asc', orderBy: 'id' }), {
        perPage: 20,
        order: 'asc',
      })) {
        seen.push(...page.items.map((c) => c.id));
      }
      expect(seen).toEqual(
        sim
          .truth()
          .contacts.map((c) => c.id)
          .sort((a, b) => a - b),
      );
      expect(client.stats().retries).toBeGreaterThan(0);
    });
  });

  it('a still listing read in parallel reports no drift and sees every contact once', async () => {
    await withSimClient({ contacts: 250, seed: 12 }, async (sim, client) => {
      const drift: DriftEvent[] = [];
      const seen: number[] = [];
      for await (const page of client.paginate((p, pp) => client.contacts.listPage({ page: p, perPage: pp, order: 'asc', orderBy: 'id' }), {
        perPage: 30,
        concurrency: 4,
        order: 'asc',
        onDrift: (e) => drift.push(e),
      })) {
        seen.push(...page.items.map((c) => c.id));
      }
      expect(drift).toEqual([]);
      expect(seen).toEqual(
        sim
          .truth()
          .contacts.map((c) => c.id)
          .sort((a, b) => a - b),
      );
    });
  });

  describe('a server that serves fewer rows than per_page asks (500 asked, 250 served)', () => {
    /** Serves at most `cap` rows; `honest` reports the served per_page and a last_page computed from it. */
    function capped(rows: Row[], cap: number, envelope: 'honest' | 'asked' | 'none') {
      const calls: number[] = [];
      const fetchPage = async (page: number, perPage: number): Promise<Page<Row>> => {
        calls.push(page);
        const served = Math.min(perPage, cap);
        const items = rows.slice((page - 1) * served, page * served);
        if (envelope === 'none') return { items, total: undefined, perPage, currentPage: page, lastPage: undefined };
        const reported = envelope === 'honest' ? served : perPage;
        return { items, total: rows.length, perPage: reported, currentPage: page, lastPage: Math.ceil(rows.length / reported) };
      };
      return { fetchPage, calls };
    }
    const all = ids(2000).map((r) => r.id);

    it('follows last_page computed from the served per_page, in parallel too', async () => {
      for (const concurrency of [1, 4]) {
        const l = capped(ids(2000), 250, 'honest');
        const pages = await collect(paginate(l.fetchPage, { perPage: 500, concurrency }));
        expect(pages.flatMap((p) => p.items.map((r) => r.id))).toEqual(all);
        expect(pages.at(-1)!.currentPage).toBe(8);
      }
    });

    it('without page metadata, a page as long as the served per_page is not the end', async () => {
      const l = capped(ids(2000), 250, 'none');
      // The envelope reports no per_page: short against the asked 500, so only total or per_page can say more.
      const pages = await collect(paginate(l.fetchPage, { perPage: 500 }));
      expect(pages.flatMap((p) => p.items.map((r) => r.id))).toEqual(all.slice(0, 250));
      const reported = async (page: number, perPage: number): Promise<Page<Row>> => ({ ...(await l.fetchPage(page, perPage)), perPage: 250 });
      const full = await collect(paginate(reported, { perPage: 500 }));
      expect(full.flatMap((p) => p.items.map((r) => r.id))).toEqual(all);
    });

    it('reads on past a last_page computed from the asked per_page until the total is read', async () => {
      const l = capped(ids(2000), 250, 'asked');
      const drift: DriftEvent[] = [];
      const pages = await collect(paginate(l.fetchPage, { perPage: 500, onDrift: (e) => drift.push(e) }));
      expect(pages.flatMap((p) => p.items.map((r) => r.id))).toEqual(all);
      expect(l.calls).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(drift).toEqual([]);
    });
  });
});
