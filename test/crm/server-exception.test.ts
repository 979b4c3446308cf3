import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyErrorResponse } from '../../src/crm/classify-response.js';
import { DatabaseBusyError, ServerExceptionError } from '../../src/crm/index.js';
import { toApplicationFailure } from '../../activities/to-application-failure.js';
import { withSimClient } from './helpers/sim-client.js';
import { api } from '../simulator/helpers.js';

const SHARED = join(import.meta.dirname, '../../../shared/fixtures/fluentcrm-2.9');

interface Captured {
  request: { method: string; path: string; query: Record<string, string | number> | null };
  status: number;
  headers: Record<string, string>;
  body: { message: string };
}

function captured(name: string): Captured {
  const file = join(SHARED, `${name}.json`);
  if (!existsSync(file)) throw new Error(`missing fixture ${file}: this test needs ../shared/fixtures next to the repository`);
  return JSON.parse(readFileSync(file, 'utf8')) as Captured;
}

function classifyCaptured(f: Captured, body = JSON.stringify(f.body)) {
  return classifyErrorResponse({
    method: f.request.method,
    path: f.request.path.replace('/wp-json/fluent-crm/v2', ''),
    query: f.request.query ?? {},
    statusCode: f.status,
    headers: f.headers,
    body,
  });
}

/** Issue 14 item 5: the real deployment answers 423 for every database exception, transient ones included. */
describe('423 is classified by its message', () => {
  it('an SQL error caused by our own parameter is final and names the parameter and the fix', () => {
    const perPage = classifyCaptured(captured('GET_subscribers_per_page_-1'));
    expect(perPage).toBeInstanceOf(ServerExceptionError);
    expect(perPage.retryable).toBe(false);
    expect((perPage as ServerExceptionError).parameter).toBe('per_page');
    expect(perPage.message).toMatch(/per_page=-1/);
    expect(perPage.message).toMatch(/page size of 1 or more/);

    const sortBy = classifyCaptured(captured('GET_campaigns_sort_by_bogus'));
    expect(sortBy).toBeInstanceOf(ServerExceptionError);
    expect(sortBy.retryable).toBe(false);
    expect((sortBy as ServerExceptionError).parameter).toBe('sort_by');
    expect(sortBy.message).toMatch(/sort_by=bogus/);
    expect(sortBy.message).toMatch(/sort by a column this endpoint has/);
  });

  it('a deadlock or lock wait timeout in the captured message shape is retryable, and Temporal retries it', () => {
    const f = captured('GET_campaigns_sort_by_bogus');
    const sql = f.body.message.slice(f.body.message.indexOf(' (SQL: '));
    for (const text of ['Deadlock found when trying to get lock; try restarting transaction', 'Lock wait timeout exceeded; try restarting transaction']) {
      const e = classifyCaptured({ ...f, request: { ...f.request, query: {} } }, JSON.stringify({ message: `${text}${sql}` }));
      expect(e).toBeInstanceOf(DatabaseBusyError);
      expect(e.retryable).toBe(true);
      expect(e.code).toBe('CRM_DATABASE_BUSY');
      expect((toApplicationFailure(e) as { nonRetryable: boolean }).nonRetryable).toBe(false);
    }
  });

  it('a lost database connection is retryable and says so; it does not blame the request', () => {
    const f = captured('GET_campaigns_sort_by_bogus');
    const sql = f.body.message.slice(f.body.message.indexOf(' (SQL: '));
    for (const text of ['SQLSTATE[HY000]: General error: 2006 MySQL server has gone away', 'SQLSTATE[HY000] [1040] Too many connections', 'Lost connection to MySQL server during query']) {
      const e = classifyCaptured(f, JSON.stringify({ message: `${text}${sql}` }));
      expect(e, text).toBeInstanceOf(DatabaseBusyError);
      expect(e.retryable).toBe(true);
      expect(e.message).toMatch(/lost its database connection .*retried with backoff.*site's administrator/);
      expect(e.message).not.toMatch(/bad parameter|sort_by/);
    }
  });

  it('an exception on a write with no query does not point at query parameters', () => {
    const e = classifyErrorResponse({
      method: 'POST',
      path: '/subscribers',
      query: {},
      statusCode: 423,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: JSON.stringify({ message: "SQLSTATE[22001]: String data, right truncated: 1406 Data too long for column 'phone' at row 1" }),
    });
    expect(e).toBeInstanceOf(ServerExceptionError);
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/^The CRM raised an exception on POST \/subscribers \(423, a database error\); the site's error log has the details/);
    expect(e.message).not.toMatch(/bad parameter|sort field/);
  });

  it('the simulator in real mode answers deadlocks as 423 in the captured shape; spec mode has none', async () => {
    const shape = captured('GET_campaigns_sort_by_bogus');
    await withSimClient({ contacts: 5, seed: 3, mode: 'real', faults: { deadlockRate: 1 } }, async (sim) => {
      const res = await api(sim)('GET', '/subscribers?per_page=5');
      expect(res.status).toBe(423);
      expect(Object.keys(res.json as object)).toEqual(Object.keys(shape.body));
      expect(res.json.message).toMatch(/^(Deadlock found when trying to get lock|Lock wait timeout exceeded); try restarting transaction \(SQL: select .*\)$/);
      expect(res.headers.get('content-type')).toBe(shape.headers['content-type']);
    });
    await withSimClient({ contacts: 5, seed: 3, mode: 'spec', faults: { deadlockRate: 1 } }, async (sim) => {
      expect((await api(sim)('GET', '/subscribers?per_page=5')).status).toBe(200);
    });
  });

  it('the client hands a deadlock on as retryable after one request: Temporal owns the retry', async () => {
    await withSimClient({ contacts: 5, seed: 3, mode: 'real', faults: { deadlockRate: 1 } }, async (_sim, client) => {
      const err = await client.contacts.listPage({ page: 1, perPage: 5 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseBusyError);
      expect((err as DatabaseBusyError).retryable).toBe(true);
      expect(client.stats()).toMatchObject({ requests: 1, retries: 0 });
    });
  });

  it('paging through every contact survives deadlocks on a share of requests when the caller retries', async () => {
    await withSimClient({ contacts: 300, seed: 8, mode: 'real', faults: { deadlockRate: 0.25 } }, async (sim, client) => {
      const ids: number[] = [];
      let busy = 0;
      for (let page = 1; page <= 20; page++) {
        // What Temporal does with the activity: attempt again after a retryable failure.
        for (;;) {
          const p = await client.contacts.listPage({ page, perPage: 15 }).catch((e: unknown) => e);
          if (!(p instanceof DatabaseBusyError)) {
            ids.push(...(p as Awaited<ReturnType<typeof client.contacts.listPage>>).items.map((c) => c.id));
            break;
          }
          busy++;
        }
      }
      expect(new Set(ids).size).toBe(300);
      expect(busy).toBeGreaterThan(0); // some deadlocks were met
      expect(client.stats()).toMatchObject({ requests: 20 + busy, retries: 0 });
      expect(sim.stats().requests).toBe(client.stats().requests);
    });
  });
});
