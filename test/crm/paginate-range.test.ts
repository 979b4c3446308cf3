import { describe, expect, it } from 'vitest';
import { type DriftEvent, type Page, paginate } from '../../src/crm/index.js';

type Row = { id: number };

/** An id-ascending listing of `n` rows whose pages are served by `serve` (immediately by default). */
function listing(n: number, serve: (page: number) => Promise<void> = async () => undefined) {
  const rows = Array.from({ length: n }, (_, i) => ({ id: i + 1 }));
  const calls: number[] = [];
  const fetchPage = async (page: number, perPage: number): Promise<Page<Row>> => {
    calls.push(page);
    await serve(page);
    return { items: rows.slice((page - 1) * perPage, page * perPage), total: rows.length, perPage, currentPage: page, lastPage: Math.ceil(rows.length / perPage) };
  };
  return { fetchPage, calls };
}

async function collect<T>(it: AsyncIterable<Page<T>>): Promise<Page<T>[]> {
  const out: Page<T>[] = [];
  for await (const p of it) out.push(p);
  return out;
}

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('paginate: ranges, early stops and aborts', () => {
  it('reads a range from startPage to endPage of a longer listing, with no count check on a part', async () => {
    const l = listing(100);
    const drift: DriftEvent[] = [];
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, startPage: 3, endPage: 5, concurrency: 2, order: 'asc', onDrift: (e) => drift.push(e) }));
    expect(pages.map((p) => p.currentPage)).toEqual([3, 4, 5]);
    expect(l.calls.sort((a, b) => a - b)).toEqual([3, 4, 5]);
    expect(drift).toEqual([]);

    // From a later page to the end: a still listing is not reported as drift either.
    const tail = listing(100);
    const rest = await collect(paginate(tail.fetchPage, { perPage: 10, startPage: 8, onDrift: (e) => drift.push(e) }));
    expect(rest.map((p) => p.currentPage)).toEqual([8, 9, 10]);
    expect(drift).toEqual([]);
  });

  it('rejects an endPage before the startPage, naming both', async () => {
    const l = listing(100);
    await expect(collect(paginate(l.fetchPage, { perPage: 10, startPage: 4, endPage: 2 }))).rejects.toThrow('endPage must be an integer >= startPage (4)');
  });

  it('reports a range whose first page disagrees with the total the scan began with', async () => {
    const l = listing(100);
    const drift: DriftEvent[] = [];
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, startPage: 4, endPage: 6, expectedTotal: 103, onDrift: (e) => drift.push(e) }));
    expect(drift.map((e) => [e.kind, e.page, e.previousTotal, e.total])).toEqual([['total_changed', 4, 103, 100]]);
    expect(pages[0]!.drift?.map((e) => e.kind)).toEqual(['total_changed']);
  });

  it('stops after the page the caller says is the last, without asking for the next one', async () => {
    const l = listing(100);
    const pages = await collect(paginate(l.fetchPage, { perPage: 10, order: 'asc', stopAfter: (p) => p.items.some((r) => r.id >= 25) }));
    expect(pages.map((p) => p.currentPage)).toEqual([1, 2, 3]);
    // Neither page 4 read ahead nor a count check: the caller ended the scan on purpose.
    expect(l.calls).toEqual([1, 2, 3]);
    expect(pages.flatMap((p) => p.drift ?? [])).toEqual([]);
  });

  it('a caller that breaks gets control back once the pages requested ahead have settled', async () => {
    const held: Array<() => void> = [];
    const l = listing(100, (page) => (page === 1 ? Promise.resolve() : new Promise<void>((r) => held.push(r))));
    const events: string[] = [];
    const loop = (async () => {
      for await (const p of paginate(l.fetchPage, { perPage: 10, concurrency: 3 })) {
        events.push(`page ${p.currentPage}`);
        break;
      }
      events.push('loop ended');
    })();
    // Pages 2 and 3 went out with page 1; page 4 once page 1 told the page count.
    while (held.length < 3) await settle();
    await settle();
    expect(events).toEqual(['page 1']);
    events.push('responses released');
    for (const release of held) release();
    await loop;
    expect(events).toEqual(['page 1', 'responses released', 'loop ended']);
    expect(l.calls).toEqual([1, 2, 3, 4]);
  });

  it('an abort rejects the page awaited with the signal reason and requests nothing after it', async () => {
    const abort = new AbortController();
    let requested = 0;
    // Requests that honour the signal, as the client's withSignal view does.
    const l = listing(100, (page) =>
      page === 1
        ? Promise.resolve()
        : new Promise<void>((_, reject) => {
            requested++;
            abort.signal.addEventListener('abort', () => reject(new Error(`page ${page} aborted`)), { once: true });
          }),
    );
    const pages: number[] = [];
    const loop = (async () => {
      for await (const p of paginate(l.fetchPage, { perPage: 10, concurrency: 2, signal: abort.signal })) pages.push(p.currentPage);
    })();
    while (requested < 2) await settle();
    const callsAtAbort = l.calls.length;
    abort.abort(new Error('activity cancelled'));
    await expect(loop).rejects.toThrow('activity cancelled');
    expect(pages).toEqual([1]);
    expect(l.calls.length).toBe(callsAtAbort);
  });

  describe('a small head first (headRows)', () => {
    /** Newest first over ids 1..n (n first), recording each request as page@perPage. */
    function newestFirst(n: number) {
      const rows = Array.from({ length: n }, (_, i) => ({ id: n - i }));
      const asked: string[] = [];
      const fetchPage = async (page: number, perPage: number): Promise<Page<Row>> => {
        asked.push(`${page}@${perPage}`);
        return { items: rows.slice((page - 1) * perPage, page * perPage), total: rows.length, perPage, currentPage: page, lastPage: Math.ceil(rows.length / perPage) };
      };
      return { fetchPage, asked };
    }
    const downTo = (held: number) => (p: Page<Row>) => p.items.some((r) => r.id <= held);

    it('is the whole scan when the caller stops on it: one small request', async () => {
      const l = newestFirst(1_000);
      const pages = await collect(paginate(l.fetchPage, { perPage: 100, order: 'desc', stopAfter: downTo(990), headRows: 25 }));
      expect(l.asked).toEqual(['1@25']);
      expect(pages.map((p) => p.items.length)).toEqual([25]);
      expect(pages[0]!.items[0]).toEqual({ id: 1_000 });
    });

    it('is the whole scan when the listing ends within it, whatever the caller says', async () => {
      const l = newestFirst(12);
      const pages = await collect(paginate(l.fetchPage, { perPage: 100, order: 'desc', stopAfter: () => false, headRows: 25 }));
      expect(l.asked).toEqual(['1@25']);
      expect(pages.flatMap((p) => p.items.map((r) => r.id))).toEqual(Array.from({ length: 12 }, (_, i) => 12 - i));
    });

    it('is dropped when the caller goes on: the scan reads from page 1 at perPage, every row once', async () => {
      const l = newestFirst(1_000);
      const drift: DriftEvent[] = [];
      const pages = await collect(paginate(l.fetchPage, { perPage: 100, order: 'desc', stopAfter: downTo(850), headRows: 25, onDrift: (e) => drift.push(e) }));
      expect(l.asked).toEqual(['1@25', '1@100', '2@100']);
      expect(pages.map((p) => p.currentPage)).toEqual([1, 2]);
      expect(pages.flatMap((p) => p.items).length).toBe(200);
      expect(drift).toEqual([]);
    });

    it('is not asked for when it would be a full page, nor for a range or a scan without a stop', async () => {
      for (const opts of [
        { perPage: 25, stopAfter: downTo(990), headRows: 25 },
        { perPage: 100, headRows: 25 },
        { perPage: 100, stopAfter: downTo(990), headRows: 25, startPage: 2 },
      ]) {
        const l = newestFirst(1_000);
        await collect(paginate(l.fetchPage, { ...opts, order: 'desc', maxPages: 1 }));
        expect(l.asked[0]).toBe(`${opts.startPage ?? 1}@${opts.perPage}`);
      }
    });

    it('rejects a head that is not a positive integer, naming it', async () => {
      const l = newestFirst(100);
      await expect(collect(paginate(l.fetchPage, { perPage: 100, stopAfter: downTo(90), headRows: 0 }))).rejects.toThrow('headRows must be a positive integer, got 0');
      expect(l.asked).toEqual([]);
    });
  });
});
