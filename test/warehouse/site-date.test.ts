import { afterEach, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/warehouse/index.js';
import { makeContact } from './contact-factory.js';
import { ctx, tempPaths, writeScope } from './temp-warehouse.js';

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** Contacts created at 20:42 New York time on 16 March and 21:10 on 31 May (the next UTC day). */
const EVENING = [makeContact(1, { created_at: '2025-03-17T00:42:12.000Z' }), makeContact(2, { created_at: '2025-06-01T01:10:00.000Z' })];

async function growth(siteTimeZone: string): Promise<{ daily: unknown[]; monthly: unknown[] }> {
  const p = tempPaths();
  cleanups.push(p.cleanup);
  await writeScope(p, (w) => w.loadContacts(EVENING, ctx()), { siteTimeZone });
  // A reader without the site's zone (the DuckDB file's views hold it): the days stay the site's.
  const r = await openWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, readOnly: true });
  try {
    const daily = await r.query(`SELECT CAST(day AS VARCHAR) AS day, new_contacts::INTEGER AS n FROM subscriber_growth ORDER BY day`);
    const monthly = await r.query(`SELECT CAST(period_start AS VARCHAR) AS month, sum(new_contacts)::INTEGER AS n FROM subscriber_growth_by_period WHERE period = 'month' GROUP BY ALL ORDER BY 1`);
    return { daily, monthly };
  } finally {
    await r.close();
  }
}

describe('the growth views count the CRM days, in the site time zone', () => {
  it('puts an evening contact in New York on its New York day and month, not the UTC ones', async () => {
    expect(await growth('America/New_York')).toEqual({
      daily: [
        { day: '2025-03-16', n: 1 },
        { day: '2025-05-31', n: 1 },
      ],
      monthly: [
        { month: '2025-03-01', n: 1 },
        { month: '2025-05-01', n: 1 },
      ],
    });
  });

  it('puts webhook deliveries on the site day they were received', async () => {
    const p = tempPaths();
    cleanups.push(p.cleanup);
    const days = await writeScope(
      p,
      async (w) => {
        await w.query(
          `INSERT INTO webhook_events (delivery_id, event, received_at, event_at, status) VALUES
             ('d1', 'contact.updated', TIMESTAMPTZ '2025-03-17 00:30:00+00', TIMESTAMPTZ '2025-03-17 00:29:59+00', 'applied'),
             ('d2', 'contact.updated', TIMESTAMPTZ '2025-03-17 05:00:00+00', TIMESTAMPTZ '2025-03-17 04:59:59+00', 'applied')`,
        );
        return await w.query(`SELECT CAST(day AS VARCHAR) AS day, deliveries::INTEGER AS n FROM webhook_lag_daily ORDER BY day`);
      },
      { siteTimeZone: 'America/New_York' },
    );
    expect(days).toEqual([
      { day: '2025-03-16', n: 1 },
      { day: '2025-03-17', n: 1 },
    ]);
  });

  it('keeps the UTC days for a site in UTC', async () => {
    expect((await growth('UTC')).daily).toEqual([
      { day: '2025-03-17', n: 1 },
      { day: '2025-06-01', n: 1 },
    ]);
  });
});
