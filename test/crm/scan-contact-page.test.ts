import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadResponseError } from '../../src/crm/errors.js';
import { parsePage, readPageEnvelope } from '../../src/crm/parse.js';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import { contactSchema } from '../../src/crm/schemas/contact.js';
import { createTimestampNormalizer } from '../../src/crm/timestamps.js';
import { sharedFixtureDir } from '../helpers/shared-fixtures.js';

const ROUTE = 'GET /subscribers';
const schema = contactSchema(createTimestampNormalizer('America/New_York'));
const q = { page: 2, perPage: 15 };

/** Every 200 listing of /subscribers captured from the real deployments (both sites), as sent. */
function capturedListings(): { name: string; text: string }[] {
  const root = sharedFixtureDir();
  const out: { name: string; text: string }[] = [];
  for (const dir of [root, join(root, 'site-ny')]) {
    for (const f of readdirSync(dir).filter((n) => /^GET_subscribers(\.json|_(?!\d|id_|0_|999999|abc).*\.json)$/.test(n))) {
      const fixture = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { status: number; body: unknown };
      const subs = (fixture.body as { subscribers?: { data?: unknown } } | null)?.subscribers;
      if (fixture.status === 200 && subs && Array.isArray(subs.data)) out.push({ name: join(dir === root ? '' : 'site-ny', f), text: JSON.stringify(fixture.body) });
    }
  }
  return out;
}

/** Each row's text as the spans give it, parsed. */
function rowsBySpans(body: string, spans: readonly number[]): unknown[] {
  return Array.from({ length: spans.length / 2 }, (_, k) => JSON.parse(body.slice(spans[2 * k], spans[2 * k + 1])) as unknown);
}

describe('scanContactPage', () => {
  it('reads the same ids and paginator numbers from every captured listing as the parsed path', () => {
    const listings = capturedListings();
    expect(listings.length).toBeGreaterThanOrEqual(20);
    expect(listings.some((l) => l.name.startsWith('site-ny'))).toBe(true);
    for (const { name, text } of listings) {
      const parsed = parsePage(JSON.parse(text), ['subscribers'], schema, q, ROUTE);
      const scanned = scanContactPage(text, q, ROUTE);
      expect({ name, ...scanned, body: undefined, rowSpans: undefined }, name).toEqual({
        name,
        items: parsed.items.map((c) => ({ id: c.id })),
        total: parsed.total,
        perPage: parsed.perPage,
        currentPage: parsed.currentPage,
        lastPage: parsed.lastPage,
        body: undefined,
        rowSpans: undefined,
      });
      expect(scanned.body).toBe(text);
      expect(rowsBySpans(text, scanned.rowSpans!), name).toEqual((JSON.parse(text) as { subscribers: { data: unknown[] } }).subscribers.data);
    }
  });

  it('gives where each row starts and ends, whatever the whitespace, and no spans for another envelope', () => {
    const body = ` { "subscribers" : { "data" : [ {"id":"1","name":"a ] } \\" ,"} ,\n\t{ "id" : 2 , "tags" : [ {"id":3} ] } ] , "total" : 2 } } `;
    const p = scanContactPage(body, q, ROUTE);
    expect(p.rowSpans).toHaveLength(4);
    expect(rowsBySpans(body, p.rowSpans!).map((r) => JSON.stringify(r))).toEqual(['{"id":"1","name":"a ] } \\" ,"}', '{"id":2,"tags":[{"id":3}]}']);
    expect(p.rowSpans!.map((at, k) => body[k % 2 === 0 ? at : at - 1])).toEqual(['{', '}', '{', '}']);
    expect(scanContactPage('{"subscribers":{"data":[]}}', q, ROUTE).rowSpans).toEqual([]);
    expect(scanContactPage('{"subscribers":{"data":{"0":{"id":1}}}}', q, ROUTE).rowSpans).toBeUndefined();
    expect(scanContactPage('{"subscribers":[{"id":1}]}', q, ROUTE).rowSpans).toBeUndefined();
  });

  it('reads each row’s updated_at when asked, as the parsed path normalizes it', () => {
    const ts = createTimestampNormalizer('America/New_York');
    let rows = 0;
    for (const { name, text } of capturedListings()) {
      const parsed = parsePage(JSON.parse(text), ['subscribers'], schema, q, ROUTE);
      const scanned = scanContactPage(text, q, ROUTE, { updatedAt: ts });
      expect(scanned.items, name).toEqual(parsed.items.map((c) => ({ id: c.id, updated_at: c.updated_at })));
      rows += scanned.items.length;
    }
    expect(rows).toBeGreaterThan(20);
    // Inner objects' updated_at are not the row's; null and a number are no timestamp; another envelope reads the same.
    const body = `{"subscribers":{"total":3,"data":[{"id":1,"tags":[{"id":2,"updated_at":"2020-01-01 00:00:00"}],"updated_at":"2026-07-01 12:00:00"},{"id":2,"updated_at":null},{"id":3,"updated_at":5}]}}`;
    const want = [
      { id: 1, updated_at: '2026-07-01T16:00:00.000Z' },
      { id: 2, updated_at: null },
      { id: 3, updated_at: null },
    ];
    expect(scanContactPage(body, q, ROUTE, { updatedAt: ts }).items).toEqual(want);
    const keyed = JSON.stringify({ subscribers: { total: 3, data: Object.fromEntries((JSON.parse(body) as { subscribers: { data: unknown[] } }).subscribers.data.map((r, i) => [String(i), r])) } });
    expect(scanContactPage(keyed, q, ROUTE, { updatedAt: ts }).items).toEqual(want);
  });

  it('takes ids as numbers or numeric strings, and only a row’s own id', () => {
    const body = `{"subscribers":{"total":"3","per_page":"15","current_page":"2","data":[
      {"tags":[{"id":99,"title":"a \\"quoted\\" \\\\ tag"}],"id":"7","custom_values":{"id":"x"}},
      {"id":8,"lists":{"0":{"id":"5"}}},
      {"custom_fields":[],"id":" 9"}]}}`;
    const p = scanContactPage(body, q, ROUTE);
    expect(p.items).toEqual([{ id: 7 }, { id: 8 }, { id: undefined }]);
    expect([p.total, p.perPage, p.currentPage, p.lastPage]).toEqual([3, 15, 2, 1]);
  });

  it('leaves a row whose id does not fit to the load (no error), as id undefined', () => {
    const body = JSON.stringify({ subscribers: { total: 4, data: [{ id: 1.5 }, { id: null }, { email: 'a@b.c' }, { id: { n: 1 } }] } });
    expect(scanContactPage(body, q, ROUTE).items).toEqual([{ id: undefined }, { id: undefined }, { id: undefined }, { id: undefined }]);
  });

  it('reads the other envelopes the client accepts as readPageEnvelope does', () => {
    const bodies = [
      { subscribers: { total: 2, per_page: 2, data: { '0': { id: 3 }, '1': { id: '4' } } } },
      { subscribers: [{ id: 5 }], pagination: { total: 1, per_page: 10 } },
      { data: [{ id: 6 }], total: 1 },
      { subscribers: null },
    ];
    for (const b of bodies) {
      const env = readPageEnvelope(b, ['subscribers'], q, ROUTE);
      const p = scanContactPage(JSON.stringify(b), q, ROUTE);
      expect({ ...p, body: undefined }).toEqual({ ...env, items: env.items.map((r) => ({ id: Number((r as { id: unknown }).id) })), body: undefined });
    }
  });

  it('refuses a body that is not JSON with the client’s errors, without quoting contact data', () => {
    const cut = JSON.stringify({ subscribers: { total: 1, data: [{ id: 1, email: 'secret@example.com' }] } }).slice(0, -5);
    const html = '<!DOCTYPE html><html><body>Briefly unavailable for scheduled maintenance.</body></html>';
    const errorOf = (body: string): BadResponseError => {
      try {
        scanContactPage(body, q, ROUTE);
      } catch (e) {
        return e as BadResponseError;
      }
      throw new Error('expected a failure');
    };
    const truncated = errorOf(cut);
    expect(truncated).toBeInstanceOf(BadResponseError);
    expect([truncated.kind, truncated.retryable]).toEqual(['invalid_json', true]);
    expect(truncated.message).not.toContain('secret@');
    expect(errorOf(html).kind).toBe('html');
    for (const bad of ['{"subscribers":{"data":[{"id":1}]}} x', '{"subscribers":{"data":[{"id":1,}]}}', '{"subscribers":{"data":[{"id":01}]}}', '{"subscribers":{"data":[{"id":1}]}']) {
      expect(errorOf(bad).kind, bad).toBe('invalid_json');
    }
  });
});
