import { afterAll, describe, expect, it } from 'vitest';
import { scanContactPage } from '../../src/crm/scan-contact-page.js';
import { siteTimestampSql } from '../../src/warehouse/contact-page-sql.js';
import { timestampExpr, wallInZoneSql } from '../../src/warehouse/sql-expr.js';
import { DST_WALLS } from '../helpers/dst-walls.js';
import { closeTempWarehouse, openTempWarehouse } from './temp-warehouse.js';

/**
 * The warehouse reads zone-less wall times by PHP's rule, as the client does (test/crm/timestamps.test.ts):
 * every SQL form, and a contact page loaded in the site's zone, whose typing reads most wall times
 * through a shift per hour (`_zone_hours`) rather than one by one.
 */
const opened: Awaited<ReturnType<typeof openTempWarehouse>>[] = [];
afterAll(async () => {
  for (const t of opened) await closeTempWarehouse(t);
});

const zones = [...new Set(DST_WALLS.map(([zone]) => zone))];
const quoted = (s: string) => `'${s.replace(/'/g, "''")}'`;

describe('wall times at clock changes, in SQL', () => {
  it.each(zones)('every SQL form reads them as PHP does in %s', async (zone) => {
    const t = await openTempWarehouse({ siteTimeZone: zone });
    opened.push(t);
    for (const [, wall, instant] of DST_WALLS.filter(([z]) => z === zone)) {
      const [row] = await t.w.query(`SELECT ${wallInZoneSql(`TIMESTAMP ${quoted(wall)}`, zone)} AS a, ${timestampExpr(quoted(wall), zone)} AS b, ${siteTimestampSql(quoted(wall), zone)} AS c`);
      expect(row, `${zone} ${wall}`).toEqual({ a: new Date(instant), b: new Date(instant), c: new Date(instant) });
    }
  });

  it.each(zones)('a contact page loaded in %s keeps them so', async (zone) => {
    const t = await openTempWarehouse({ siteTimeZone: zone });
    opened.push(t);
    const walls = DST_WALLS.filter(([z]) => z === zone);
    // Each wall time twice: as created_at, and as updated_at of another row, so both columns' hours count.
    const data = walls.map(([, wall], k) => ({ id: k + 1, email: `c${k}@x.test`, status: 'subscribed', tags: [], lists: [], created_at: wall, updated_at: walls[walls.length - 1 - k]![1] }));
    const body = JSON.stringify({ subscribers: { total: data.length, per_page: 15, current_page: 1, last_page: 1, data } });
    const { rowSpans } = scanContactPage(body, { page: 1, perPage: 15 }, 'GET /subscribers');
    expect(await t.w.loadContactPages([{ page: 1, body, ...(rowSpans ? { rowSpans } : {}) }], { loadId: 'dst', syncedAt: new Date('2026-11-22T00:00:00Z') })).toMatchObject({
      inserted: data.length,
      rejected: 0,
    });
    const got = await t.w.query('SELECT id, created_at, updated_at FROM contacts ORDER BY id');
    expect(got).toEqual(walls.map(([, , instant], k) => ({ id: k + 1, created_at: new Date(instant), updated_at: new Date(walls[walls.length - 1 - k]![2]) })));
  });
});
