import { inspect } from 'node:util';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  CrmError,
  BadResponseError,
  createCrmClient,
  createRateLimiter,
  DuplicateError,
  ForbiddenError,
  InsecureTransportError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  ServerExceptionError,
  UnexpectedStatusError,
  ValidationError,
  CrmArgumentError,
} from '../../src/crm/index.js';
import type { ApplicationFailure } from '@temporalio/common';
import { toApplicationFailure } from '../../activities/to-application-failure.js';
import { ConfigError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startReplayServer, type ReplayServer } from './helpers/replay-server.js';
import { clientFor } from './helpers/sim-client.js';

const PASSWORD = 'pw-Sup3r-s3cret-value';
const caught = <T>(p: Promise<T>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** Everything an error could leak through: message, cause chain, inspect, JSON. */
function everyRendering(e: unknown): string {
  const parts = [String(e), inspect(e, { depth: 6 }), JSON.stringify(e)];
  for (let c = (e as { cause?: unknown })?.cause; c; c = (c as { cause?: unknown }).cause) parts.push(String(c), inspect(c));
  return parts.join('\n');
}

function expectNoSecret(e: unknown, secrets: string[]): void {
  const text = everyRendering(e);
  for (const s of secrets) expect(text).not.toContain(s);
}

describe('error taxonomy against the simulator', () => {
  let sim: RunningSimulator;
  let real: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ contacts: 20, seed: 3, credentials: { username: 'admin', password: PASSWORD } });
    real = await startSimulator({ contacts: 20, seed: 3, mode: 'real', credentials: { username: 'admin', password: PASSWORD } });
  });
  afterAll(async () => {
    await sim.close();
    await real.close();
  });

  const secrets = () => [PASSWORD, Buffer.from(`admin:${PASSWORD}`).toString('base64'), Buffer.from(`admin:wrong-${PASSWORD}`).toString('base64')];

  it('401 names the variables to fix and carries no credentials', async () => {
    const c = clientFor(sim, { password: new Secret(`wrong-${PASSWORD}`) });
    try {
      const e = await caught(c.contacts.listPage({ page: 1, perPage: 5 }));
      expect(e).toBeInstanceOf(AuthenticationError);
      expect((e as CrmError).message).toMatch(/CRM_USERNAME \/ CRM_PASSWORD/);
      expect((e as CrmError).statusCode).toBe(401);
      expect((e as CrmError).retryable).toBe(false);
      expectNoSecret(e, [...secrets(), `wrong-${PASSWORD}`]);
      await expect(c.verifyCredentials()).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      await c.close();
    }
  });

  it('403 names the capability the route needs', async () => {
    const m = sim.managerCredentials!;
    const c = clientFor(sim, { username: m.username, password: m.password });
    try {
      const id = sim.truth().contacts[0]!.id;
      const e = await caught(c.contacts.delete(id));
      expect(e).toBeInstanceOf(ForbiddenError);
      expect((e as ForbiddenError).capabilities).toEqual(['crm_manage_contacts_delete']);
      expect((e as Error).message).toContain('crm_manage_contacts_delete');
      const w = await caught(c.webhooks.list());
      expect((w as Error).message).toContain('crm_manage_settings');
      expectNoSecret(e, [m.password]);
    } finally {
      await c.close();
    }
  });

  it('404 for a record vs. a missing route (wrong base URL)', async () => {
    const c = clientFor(sim);
    const wrong = clientFor(sim, { baseUrl: sim.baseUrl.replace(/\/v2$/, '/v9') });
    try {
      const e = await caught(c.contacts.update(999_999, { first_name: 'x' }));
      expect(e).toBeInstanceOf(NotFoundError);
      expect((e as NotFoundError).routeMissing).toBe(false);
      const r = await caught(wrong.contacts.get(1));
      expect(r).toBeInstanceOf(NotFoundError);
      expect((r as NotFoundError).routeMissing).toBe(true);
      expect((r as Error).message).toMatch(/CRM_BASE_URL/);
    } finally {
      await c.close();
      await wrong.close();
    }
  });

  it('duplicates are DuplicateError in both modes (409 spec, 422 real); validation names the field', async () => {
    for (const s of [sim, real]) {
      const c = clientFor(s);
      try {
        const email = s.truth().contacts[0]!.email;
        const d = await caught(c.contacts.create({ email, status: 'subscribed' }));
        expect(d).toBeInstanceOf(DuplicateError);
        expect((d as DuplicateError).statusCode).toBe(s === sim ? 409 : 422);
        expect((d as Error).message).toMatch(/upsert/);
        const v = await caught(c.contacts.create({ email: 'not-an-email', status: 'subscribed' }));
        expect(v).toBeInstanceOf(ValidationError);
        expect((v as Error).message).toMatch(/email/);
        if (s === real) expect(Object.keys((v as ValidationError).fields)).toEqual(['email']);
      } finally {
        await c.close();
      }
    }
  });

  it('423 server exceptions are not retryable and quote the server', async () => {
    const c = clientFor(real);
    try {
      const e = await caught(c.reports.get('subscribers', { date_range: ['garbage', 'garbage'] }));
      expect(e).toBeInstanceOf(ServerExceptionError);
      expect((e as CrmError).retryable).toBe(false);
      expect((e as Error).message).toMatch(/Failed to parse time string/);
    } finally {
      await c.close();
    }
  });

  it('429 carries Retry-After in ms, counts in stats, and pauses the limiter', async () => {
    const limiter = createRateLimiter({ maxRps: 1000, maxConcurrency: 8, adaptive: false });
    const c = clientFor(sim, { limiter, retry: { maxRetries: 0 } });
    sim.setFaults({ rateLimitRps: 3 });
    try {
      const t0 = performance.now();
      const results = await Promise.all(Array.from({ length: 8 }, () => caught(c.contacts.listPage({ page: 1, perPage: 1 }))));
      const elapsed = performance.now() - t0;
      const limited = results.filter((r) => r instanceof RateLimitedError) as RateLimitedError[];
      expect(limited.length).toBeGreaterThan(0);
      expect(limited[0]!.retryable).toBe(true);
      expect(limited[0]!.retryAfterMs).toBe(1000);
      expect(c.stats().status429).toBe(limited.length);
      expect(limiter.snapshot().rateLimited).toBe(limited.length);
      // The pause is still on, or requests sent after the first 429 sat it out.
      expect(limiter.snapshot().pausedForMs > 500 || elapsed >= 900).toBe(true);
    } finally {
      sim.setFaults({});
      await c.close();
    }
  });

  it('a 429 on a write is thrown at once with its Retry-After: the activity retry owns the wait', async () => {
    const c = clientFor(sim, { limiter: createRateLimiter({ maxRps: 1000, adaptive: false }) });
    sim.setFaults({ rateLimitRps: 1 });
    sim.resetStats();
    try {
      await c.contacts.listPage({ page: 1, perPage: 1 }); // uses the window's one request
      const e = await caught(c.contacts.upsert({ email: 'after.429@example.test', status: 'subscribed' }));
      expect(e).toBeInstanceOf(RateLimitedError);
      expect((e as CrmError).retryable).toBe(true);
      expect((e as CrmError).retryAfterMs).toBeGreaterThan(0);
      expect((toApplicationFailure(e) as ApplicationFailure).nextRetryDelay).toBe((e as CrmError).retryAfterMs);
      expect(sim.stats().requests).toBe(2);
      expect(c.stats()).toMatchObject({ requests: 2, status429: 1, retries: 0 });
    } finally {
      sim.setFaults({});
      await c.close();
    }
  });

  it('5xx is a retryable ServerError after one request, for reads and writes alike', async () => {
    const c = clientFor(sim);
    sim.setFaults({ errorRate: 1 });
    sim.resetStats();
    try {
      const e = await caught(c.contacts.listPage({ page: 1, perPage: 1 }));
      expect(e).toBeInstanceOf(ServerError);
      expect((e as CrmError).retryable).toBe(true);
      expect(sim.stats().requests).toBe(1);
      expect(c.stats()).toMatchObject({ requests: 1, retries: 0, retriesAdvised: 1 });
      const w = await caught(c.contacts.create({ email: 'x5@example.test', status: 'subscribed' }));
      expect(w).toBeInstanceOf(ServerError);
      expect(sim.stats().requests).toBe(2);
    } finally {
      sim.setFaults({});
      await c.close();
    }
  });

  it('dropped connections are NetworkError, truncated bodies BadResponseError; both retryable and redacted', async () => {
    const c = clientFor(sim, { retry: { maxRetries: 0 } });
    try {
      sim.setFaults({ dropRate: 1 });
      const d = await caught(c.contacts.listPage({ page: 1, perPage: 5 }));
      expect(d).toBeInstanceOf(NetworkError);
      expect((d as CrmError).retryable).toBe(true);
      expectNoSecret(d, secrets());
      sim.setFaults({ truncateRate: 1 });
      const t = await caught(c.contacts.listPage({ page: 1, perPage: 5 }));
      expect(t).toBeInstanceOf(BadResponseError);
      expect(['truncated', 'invalid_json']).toContain((t as BadResponseError).kind);
      expect((t as CrmError).retryable).toBe(true);
      expectNoSecret(t, secrets());
    } finally {
      sim.setFaults({});
      await c.close();
    }
  });

  it('a reset connection is resent once for a read, never for a write', async () => {
    const c = clientFor(sim);
    sim.setFaults({ dropRate: 1 });
    sim.resetStats();
    try {
      const r = await caught(c.contacts.listPage({ page: 1, perPage: 5 }));
      expect(r).toBeInstanceOf(NetworkError);
      expect(sim.stats().requests).toBe(2);
      expect(c.stats()).toMatchObject({ requests: 2, retries: 1 });
      const w = await caught(c.contacts.create({ email: 'reset@example.test', status: 'subscribed' }));
      expect(w).toBeInstanceOf(NetworkError);
      expect((w as CrmError).retryable).toBe(true);
      expect(sim.stats().requests).toBe(3);
      // A truncated body is not a reset before a response: the server answered, so no resend.
      sim.setFaults({ truncateRate: 1 });
      const t = await caught(c.contacts.listPage({ page: 1, perPage: 5 }));
      expect(t).toBeInstanceOf(BadResponseError);
      expect(sim.stats().requests).toBe(4);
    } finally {
      sim.setFaults({});
      await c.close();
    }
  });

  it('no secret reaches the logs, even at trace level with failures', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    const c = clientFor(sim, { logger });
    sim.setFaults({ errorRate: 0.5 });
    try {
      for (let i = 0; i < 6; i++) await caught(c.contacts.listPage({ page: 1, perPage: 2 }));
    } finally {
      sim.setFaults({});
      await c.close();
    }
    const text = lines.join('');
    expect(text).toContain('crm request');
    for (const s of secrets()) expect(text).not.toContain(s);
  });
});

describe('errors the simulator cannot produce (tiny local server)', () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer('/v2');
  });
  afterAll(async () => {
    await server.close();
  });
  const client = (extra = {}) =>
    createCrmClient({ baseUrl: server.baseUrl, username: 'u', password: PASSWORD, limiter: createRateLimiter({ maxRps: 1000, adaptive: false }), retry: { maxRetries: 0 }, ...extra });

  it("a 503 then a 200: one request per call, and the next attempt (Temporal's) succeeds", async () => {
    const c = client({ retry: { maxRetries: 1 } });
    let calls = 0;
    server.respond((_req, res) => {
      calls++;
      res.writeHead(calls === 1 ? 503 : 200, { 'content-type': 'application/json' });
      res.end(calls === 1 ? '{"message":"busy"}' : JSON.stringify({ subscriber: { id: 1, email: 'a@example.test', status: 'subscribed' } }));
    });
    try {
      const first = await caught(c.contacts.get(1));
      expect(first).toBeInstanceOf(ServerError);
      expect((toApplicationFailure(first) as ApplicationFailure).nonRetryable).toBe(false);
      expect(calls).toBe(1);
      const second = await c.contacts.get(1);
      expect(second?.id).toBe(1);
      expect(calls).toBe(2);
      expect(c.stats()).toMatchObject({ requests: 2, retries: 0 });
    } finally {
      await c.close();
    }
  });

  it('a keep-alive connection reset before the response is resent once, and only once', async () => {
    const c = client({ retry: { maxRetries: 5 } });
    let calls = 0;
    server.respond((_req, res) => {
      calls++;
      if (calls <= 1) return void res.socket?.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ subscriber: { id: 2, email: 'b@example.test', status: 'subscribed' } }));
    });
    try {
      expect((await c.contacts.get(2))?.id).toBe(2);
      expect(calls).toBe(2);
      expect(c.stats()).toMatchObject({ requests: 2, retries: 1 });
      calls = -10; // every request from here is reset
      const e = await caught(c.contacts.get(2));
      expect(e).toBeInstanceOf(NetworkError);
      expect(calls).toBe(-8); // the request and one resend, whatever maxRetries says
    } finally {
      await c.close();
    }
  });

  it('Retry-After as an HTTP-date', async () => {
    const c = client();
    try {
      server.respond({ status: 429, headers: { 'retry-after': new Date(Date.now() + 3000).toUTCString() }, body: '{"message":"slow down"}' });
      const e = await caught(c.contacts.get(1));
      expect(e).toBeInstanceOf(RateLimitedError);
      expect((e as CrmError).retryAfterMs).toBeGreaterThan(1000);
      expect((e as CrmError).retryAfterMs).toBeLessThanOrEqual(3000);
      expect((e as Error).message).toMatch(/retry after [23] s/);
    } finally {
      await c.close();
    }
  });

  it('an error body that echoes the credentials is redacted', async () => {
    const c = client();
    try {
      server.respond((req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `bad auth header ${req.headers.authorization} for ${PASSWORD}` }));
      });
      const e = await caught(c.contacts.get(1));
      expect(e).toBeInstanceOf(ServerError);
      expect((e as Error).message).toContain('[redacted]');
      expectNoSecret(e, [PASSWORD, Buffer.from(`u:${PASSWORD}`).toString('base64')]);
    } finally {
      await c.close();
    }
  });

  it('a page, invalid JSON or an error echoing the credentials or a webhook secret sent keeps them out of the error and its cause', async () => {
    const c = client();
    const token = Buffer.from(`u:${PASSWORD}`).toString('base64');
    try {
      // A PHP debug page on a 2xx, read parsed and raw: the message quotes the page's start.
      server.respond({ status: 200, headers: { 'content-type': 'text/html' }, body: `<html><body>PHP_AUTH_PW=${PASSWORD} HTTP_AUTHORIZATION=Basic ${token}</body></html>` });
      for (const call of [() => c.contacts.get(1), () => c.contacts.listPageRaw({ page: 1, perPage: 10 })] as (() => Promise<unknown>)[]) {
        const page = await caught(call());
        expect(page).toBeInstanceOf(BadResponseError);
        expect((page as BadResponseError).kind).toBe('html');
        expect((page as Error).message).toMatch(/Page starts: "PHP_AUTH_PW=\[redacted\]/);
        expectNoSecret(page, [PASSWORD, token]);
      }
      // JSON.parse's own message quotes the text at the fault: not kept as the cause.
      server.respond({ status: 200, body: `{"subscriber": ${PASSWORD}}` });
      const json = await caught(c.contacts.get(1));
      expect((json as BadResponseError).kind).toBe('invalid_json');
      expectNoSecret(json, [PASSWORD.slice(0, 6)]);
      // The CRM's validation of a webhook write quoting the secret it was sent.
      const secret = 'whsec-echoed-by-the-crm-1';
      server.respond((req, res) => {
        const sent = (JSON.parse(req.body) as { secret?: string }).secret;
        res.writeHead(req.method === 'POST' ? 422 : 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'rest_invalid_param', message: `Invalid secret ${sent}`, data: { params: { secret: `${sent} is not allowed` } } }));
      });
      const created = await caught(c.webhooks.create({ name: 'n', url: 'https://hooks.example.test/crm', events: ['contact.created'], secret }));
      const updated = await caught(c.webhooks.update(3, { secret: new Secret(secret) }));
      expect(created).toBeInstanceOf(ValidationError);
      expect(updated).toBeInstanceOf(ServerError);
      for (const e of [created, updated]) {
        expect((e as Error).message).toContain('[redacted]');
        expectNoSecret(e, [secret]);
      }
      expect(server.requests.at(-1)!.body).toContain(secret); // it was sent, as it must be
    } finally {
      await c.close();
    }
  });

  it('a redirect is not followed and names the fix; bad arguments fail before any request', async () => {
    const c = client();
    try {
      server.respond({ status: 301, headers: { location: 'https://crm.example.com/wp-json/fluent-crm/v2/subscribers/1?x=1' }, body: '' });
      const e = await caught(c.contacts.get(1));
      expect(e).toBeInstanceOf(UnexpectedStatusError);
      expect((e as Error).message).toMatch(/CRM_BASE_URL/);
      expect((e as Error).message).toContain('https://crm.example.com/wp-json/fluent-crm/v2/subscribers/1');
      const before = server.requests.length;
      await expect(c.contacts.listPage({ page: 1, perPage: 0 })).rejects.toBeInstanceOf(CrmArgumentError);
      await expect(c.contacts.listPage({ page: 0, perPage: 10 })).rejects.toBeInstanceOf(CrmArgumentError);
      await expect(c.contacts.get(-1)).rejects.toBeInstanceOf(CrmArgumentError);
      await expect(c.contacts.upsert({ email: 'a@b.c', status: '' })).rejects.toThrow(/status/);
      await expect(c.funnels.setStatus(1, 'bogus' as 'draft')).rejects.toBeInstanceOf(CrmArgumentError);
      await expect(c.contacts.upsert({ email: 'a@b.c', status: 'subscribed', custom_values: { notes: 'x'.repeat(5 * 1024 * 1024) } })).rejects.toBeInstanceOf(CrmArgumentError);
      expect(server.requests.length).toBe(before);
    } finally {
      await c.close();
    }
    // A closed client says so, and it is not worth retrying.
    const closed = await caught(c.contacts.get(1));
    expect(closed).toBeInstanceOf(CrmError);
    expect((closed as CrmError).code).toBe('CRM_CLIENT_CLOSED');
    expect((closed as CrmError).retryable).toBe(false);
  });

  it('withSignal cancels a request in flight and one waiting for the limiter; neither is retryable', async () => {
    const limiter = createRateLimiter({ maxRps: 1, maxConcurrency: 1, adaptive: false });
    const c = client({ limiter, retry: { maxRetries: 2 } });
    try {
      server.respond((_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"subscriber": null}');
        }, 2000).unref();
      });
      const ac = new AbortController();
      const view = c.withSignal(ac.signal);
      const inFlight = caught(view.contacts.get(1));
      const waiting = caught(view.contacts.get(2));
      setTimeout(() => ac.abort(), 100);
      const [a, b] = await Promise.all([inFlight, waiting]);
      for (const e of [a, b]) {
        expect(e).toBeInstanceOf(CrmError);
        expect((e as CrmError).code).toBe('CRM_REQUEST_ABORTED');
        expect((e as CrmError).retryable).toBe(false);
      }
      expect(c.stats().requests).toBe(1); // the view shares the client's accounting
      expect(c.stats().retries).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('a row that breaks the schema names its path; invalid JSON in a 200 is retryable; an oversized body is refused; a stalled body times out', async () => {
    const c = client({ maxBodyBytes: 1000, timeouts: { bodyMs: 300, headersMs: 2000 } });
    try {
      server.respond({ status: 200, body: JSON.stringify({ subscribers: { total: 1, per_page: 10, current_page: 1, last_page: 1, data: [{ id: 'seven', email: 'a@b.c' }] } }) });
      const schema = await caught(c.contacts.listPage({ page: 1, perPage: 10 }));
      expect(schema).toBeInstanceOf(BadResponseError);
      expect((schema as BadResponseError).kind).toBe('schema');
      expect((schema as BadResponseError).retryable).toBe(false);
      expect((schema as Error).message).toMatch(/data\.0\.id/);
      server.respond({ status: 200, body: '{"subscriber": {"id": 1, "email"' });
      const j = await caught(c.contacts.get(1));
      expect(j).toBeInstanceOf(BadResponseError);
      expect((j as BadResponseError).retryable).toBe(true);
      server.respond({ status: 200, body: JSON.stringify({ subscriber: { id: 1, email: 'a@b.c', pad: 'x'.repeat(5000) } }) });
      const big = await caught(c.contacts.get(1));
      expect(big).toBeInstanceOf(BadResponseError);
      expect((big as BadResponseError).kind).toBe('too_large');
      server.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"subscriber":');
      });
      const stalled = await caught(c.contacts.get(1));
      expect(stalled).toBeInstanceOf(NetworkError);
      expect((stalled as Error).message).toMatch(/stalled/);
    } finally {
      await c.close();
    }
  });

  it('sends Basic auth, Accept: application/json, both sort parameter styles, and method override when asked', async () => {
    const c = client({ methodOverride: true });
    try {
      server.respond({ status: 200, body: JSON.stringify({ subscribers: { total: 0, per_page: 5, current_page: 1, last_page: 0, data: [] } }) });
      await c.contacts.listPage({ page: 2, perPage: 5, order: 'asc', orderBy: 'id', statuses: ['subscribed', 'pending'] });
      const r = server.requests.at(-1)!;
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from(`u:${PASSWORD}`).toString('base64')}`);
      expect(r.headers.accept).toBe('application/json');
      const q = new URL(r.url, 'http://x').searchParams;
      expect(q.get('order_by')).toBe('id');
      expect(q.get('order_type')).toBe('ASC');
      expect(q.get('sort_by')).toBe('id');
      expect(q.get('sort_type')).toBe('ASC');
      expect(q.getAll('statuses[]')).toEqual(['subscribed', 'pending']);
      expect(r.url).not.toContain(PASSWORD);
      server.respond({ status: 200, body: '{"message":"deleted"}' });
      await c.contacts.delete(5);
      const d = server.requests.at(-1)!;
      expect(d.method).toBe('POST');
      expect(d.headers['x-http-method-override']).toBe('DELETE');
    } finally {
      await c.close();
    }
  });
});

describe('construction refuses unsafe configuration', () => {
  it('plain http to a non-loopback host needs allowInsecureHttp; credentials in the URL are refused', async () => {
    const base = { username: 'u', password: PASSWORD };
    expect(() => createCrmClient({ ...base, baseUrl: 'http://crm.example.com/v2' })).toThrow(InsecureTransportError);
    const ok = createCrmClient({ ...base, baseUrl: 'http://crm.example.com/v2', allowInsecureHttp: true });
    await ok.close();
    const tls = createCrmClient({ ...base, baseUrl: 'https://crm.example.com/v2' });
    await tls.close();
    expect(() => createCrmClient({ ...base, baseUrl: 'https://u:p@crm.example.com/v2' })).toThrow(ConfigError);
    expect(() => createCrmClient({ ...base, baseUrl: `https://crm.example.com/v2?_host_http_referer=u:${PASSWORD}` })).toThrow(ConfigError);
    try {
      createCrmClient({ ...base, baseUrl: 'http://crm.example.com/v2' });
    } catch (e) {
      expect((e as Error).message).toMatch(/CRM_ALLOW_INSECURE_HTTP/);
      expectNoSecret(e, [PASSWORD]);
    }
  });
});
