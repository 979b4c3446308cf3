import { describe, expect, it } from 'vitest';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import { bodyBytes, rawPageBodies } from '../../src/sync/raw-page-bodies.js';

const listing = (rows: unknown[]) => JSON.stringify({ subscribers: { total: rows.length, per_page: 15, current_page: 1, data: rows } });
const rowsBySpans = (body: Buffer, spans: readonly number[]) => Array.from({ length: spans.length / 2 }, (_, k) => body.subarray(spans[2 * k], spans[2 * k + 1]).toString('utf8'));

describe('page bodies as bytes', () => {
  it('counts the row spans in bytes, so each span holds its row whatever characters come before it', () => {
    const rows = [
      { id: 1, first_name: 'Zoë', city: 'Münster' },
      { id: 2, first_name: '李', note: 'two 🎉 bytes' },
      { id: 3, first_name: 'plain' },
    ];
    const body = listing(rows);
    const page = scanContactPage(body, { page: 1, perPage: 15 }, 'GET /subscribers');
    const bytes = bodyBytes(body, page.rowSpans);
    expect(bytes.body.toString('utf8')).toBe(body);
    expect(rowsBySpans(bytes.body, bytes.rowSpans!).map((r) => JSON.parse(r) as unknown)).toEqual(rows);
  });

  it('hands the warehouse the bodies as bytes, re-read ones too', () => {
    const body = listing([{ id: 5, first_name: 'Ана' }]);
    const page = { ...scanContactPage(body, { page: 1, perPage: 15 }, 'GET /subscribers'), alsoRead: [listing([{ id: 4 }])] };
    const [own, again] = rawPageBodies(page, 1, { minId: 3 });
    expect(Buffer.isBuffer(own!.body) && Buffer.isBuffer(again!.body)).toBe(true);
    expect(rowsBySpans(own!.body as Buffer, own!.rowSpans!)).toEqual(['{"id":5,"first_name":"Ана"}']);
    expect(again).toMatchObject({ page: 1, minId: 3 });
  });
});
