import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { isSpecError, withSim, type Api, type Json } from './helpers.js';

interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  raw: string;
}

/** A real receiver on port 0 that answers with the status `respond` picks. */
async function startReceiver(respond: (n: number) => number = () => 200): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ at: Date.now(), headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(respond(received.length)).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let sim: RunningSimulator;
let call: Api;

beforeAll(async () => {
  // 1 min -> 6 ms, 5 min -> 30 ms, 30 min -> 180 ms, 2 h -> 720 ms, 24 h -> 8.64 s (never reached: disabled first)
  ({ sim, call } = await withSim({ contacts: 40, allowHttpWebhookUrls: true, webhookTimeScale: 0.0001 }));
});
afterAll(async () => {
  await sim.close();
});

describe('webhook registration (spec: Webhooks)', () => {
  it('validates: name required, HTTPS URL (400 invalid_webhook_url), known events (400 invalid_webhook_event)', async () => {
    const strict = await withSim({ contacts: 1 });
    try {
      const http = await strict.call('POST', '/webhooks', { name: 'x', url: 'http://example.test/hook', events: ['contact.created'] });
      expect(http.status).toBe(400);
      expect(isSpecError(http.json, 400, 'invalid_webhook_url')).toBe(true);
      // http:// is refused by this simulator's choice: the refusal names the flag that lifts it.
      expect(http.json.message).toMatch(/valid HTTPS URL .*start the simulator with --allow-http-webhooks \(option allowHttpWebhookUrls\)/);
      const notUrl = await strict.call('POST', '/webhooks', { name: 'x', url: 'not a url', events: ['contact.created'] });
      expect(notUrl.json.code).toBe('invalid_webhook_url');
      expect(notUrl.json.message).not.toMatch(/allow-http/);
      const ok = await strict.call('POST', '/webhooks', { name: 'x', url: 'https://example.test/hook', events: ['contact.created'] });
      expect(ok.status).toBe(200);
    } finally {
      await strict.sim.close();
    }
    const badEvent = await call('POST', '/webhooks', { name: 'x', url: 'https://example.test/h', events: ['contact.exploded'] });
    expect(badEvent.status).toBe(400);
    expect(isSpecError(badEvent.json, 400, 'invalid_webhook_event')).toBe(true);
    // Allowed, but not with credentials in it: the flag would not help.
    const withCredentials = await call('POST', '/webhooks', { name: 'x', url: 'http://u:p@example.test/h', events: ['contact.created'] });
    expect(withCredentials.json.code).toBe('invalid_webhook_url');
    expect(withCredentials.json.message).not.toMatch(/allow-http/);
    const noName = await call('POST', '/webhooks', { url: 'https://example.test/h', events: ['contact.created'] });
    expect(noName.status).toBe(400);
  });

  it('lists, updates and deletes; status defaults to active; delete answers webhooks and message', async () => {
    const c = await call('POST', '/webhooks', { name: 'CRUD', url: 'https://example.test/crud', events: ['contact.updated'], status: 'inactive' });
    const id = c.json.webhook.id;
    const c2 = await call('POST', '/webhooks', { name: 'CRUD2', url: 'https://example.test/crud2', events: ['contact.updated'] });
    expect(c2.json.webhook.status).toBe('active');
    expect(c2.json.webhook.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const list = await call('GET', '/webhooks');
    expect(list.json.webhooks.map((w: Json) => w.id)).toEqual(expect.arrayContaining([id, c2.json.webhook.id]));
    const upd = await call('PUT', `/webhooks/${id}`, { name: 'Renamed' });
    expect(upd.status).toBe(200);
    expect((await call('GET', '/webhooks')).json.webhooks.find((w: Json) => w.id === id).name).toBe('Renamed');
    const del = await call('DELETE', `/webhooks/${id}`);
    expect(Array.isArray(del.json.webhooks)).toBe(true);
    expect(typeof del.json.message).toBe('string');
    expect(del.json.webhooks.some((w: Json) => w.id === id)).toBe(false);
    expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(404);
    await call('DELETE', `/webhooks/${c2.json.webhook.id}`);
  });
});

describe('outbound delivery (spec: Events)', () => {
  it('sends the payload with the spec headers, and X-Service-Signature verifies with an independent HMAC of the raw body', async () => {
    const rx = await startReceiver();
    try {
      const secret = 'receiver-shared-secret-1';
      const hook = await call('POST', '/webhooks', { name: 'sig', url: rx.url, events: ['contact.created', 'contact.tag_added'], secret });
      const created = await call('POST', '/subscribers', { email: 'hooked@example.org', status: 'subscribed', first_name: 'Hook', last_name: 'Ed', tags: [2] });
      await until(() => rx.received.length >= 2);
      const first = rx.received[0] as Received;
      const expected = `sha256=${createHmac('sha256', secret).update(first.raw).digest('hex')}`;
      expect(first.headers['x-service-signature']).toBe(expected);
      expect(createHmac('sha256', 'wrong-secret').update(first.raw).digest('hex')).not.toBe(expected.slice(7));
      expect(first.headers['content-type']).toBe('application/json');
      expect(first.headers['user-agent']).toMatch(/1\.0/);
      expect(first.headers['x-service-event']).toBe('contact.created');
      expect(first.headers['x-service-webhook-id']).toBe(String(hook.json.webhook.id));
      expect(first.headers['x-service-delivery']).toMatch(/^\d+$/);
      const body = JSON.parse(first.raw) as Json;
      expect(Object.keys(body).sort()).toEqual(['data', 'event', 'signature', 'timestamp', 'webhook_id']);
      expect(body.event).toBe('contact.created');
      expect(body.webhook_id).toBe(hook.json.webhook.id);
      expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(body.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(body.data.contact).toEqual({
        id: created.json.contact.id,
        email: 'hooked@example.org',
        first_name: 'Hook',
        last_name: 'Ed',
        status: 'subscribed',
        created_at: created.json.contact.created_at,
      });
      const second = JSON.parse((rx.received[1] as Received).raw) as Json;
      expect(second.event).toBe('contact.tag_added');
      expect(second.data.tag.id).toBe(2);
      await call('DELETE', `/webhooks/${hook.json.webhook.id}`);
    } finally {
      await rx.close();
    }
  });

  it('maps operations to events: updated, status_changed, list_added/removed, tag_removed, deleted; email.* from a simulated send', async () => {
    const rx = await startReceiver();
    try {
      const hook = await call('POST', '/webhooks', {
        name: 'all',
        url: rx.url,
        events: ['contact.updated', 'contact.status_changed', 'contact.list_added', 'contact.list_removed', 'contact.tag_removed', 'contact.deleted', 'email.opened', 'email.bounced'],
      });
      const c = sim.truth().contacts.find((x) => x.status === 'subscribed' && x.tags.length > 0 && !x.lists.includes(5)) as Json;
      await call('PUT', `/subscribers/${c.id}`, { subscriber: { status: 'unsubscribed', attach_lists: [5], detach_tags: [c.tags[0]] } });
      await call('PUT', `/subscribers/${c.id}`, { subscriber: { detach_lists: [5] } });
      sim.mutate.emailEvent('email.opened', c.id, 1);
      await call('DELETE', `/subscribers/${c.id}`);
      await until(() => rx.received.length >= 8);
      const events = rx.received.map((r) => r.headers['x-service-event']);
      expect(events).toEqual(['contact.updated', 'contact.status_changed', 'contact.tag_removed', 'contact.list_added', 'contact.updated', 'contact.list_removed', 'email.opened', 'contact.deleted']);
      const opened = JSON.parse((rx.received[6] as Received).raw) as Json;
      expect(opened.data.email).toMatchObject({ contact_id: c.id, campaign_id: 1, opened_at: expect.any(String), subject: expect.any(String) });
      await call('DELETE', `/webhooks/${hook.json.webhook.id}`);
    } finally {
      await rx.close();
    }
  });

  it('retries at 1 min, 5 min, 30 min, 2 h (scaled) and disables the webhook after 5 consecutive failures', async () => {
    const rx = await startReceiver(() => 500);
    try {
      const hook = await call('POST', '/webhooks', { name: 'flaky', url: rx.url, events: ['contact.created'] });
      const id = hook.json.webhook.id;
      await call('POST', '/subscribers', { email: 'retry@example.org', status: 'subscribed' });
      await until(() => rx.received.length >= 5, 8000);
      await sim.settleWebhooks(3000);
      expect(rx.received).toHaveLength(5);
      const gaps = rx.received.slice(1).map((r, i) => r.at - (rx.received[i] as Received).at);
      const expected = [60_000, 300_000, 1_800_000, 7_200_000].map((ms) => ms * 0.0001);
      gaps.forEach((g, i) => {
        expect(g).toBeGreaterThanOrEqual((expected[i] as number) - 2);
        expect(g).toBeLessThan((expected[i] as number) + 1000);
      });
      // Each gap grows as the schedule does (a check that does not depend on machine speed).
      expect(gaps[3] as number).toBeGreaterThan(gaps[2] as number);
      expect(gaps[2] as number).toBeGreaterThan(gaps[1] as number);
      const w = (await call('GET', '/webhooks')).json.webhooks.find((x: Json) => x.id === id);
      expect(w.status).toBe('failed');
      const d = await call('GET', `/webhooks/${id}/deliveries`);
      expect(d.json.deliveries).toHaveLength(1);
      expect(d.json.deliveries[0]).toMatchObject({ event: 'contact.created', status: 'failed', response_code: 500, response_time: expect.any(Number), attempted_at: expect.any(String) });
      expect(d.json.pagination).toEqual({ total: 1, per_page: 25, current_page: 1, last_page: 1 });
      // Disabled: new events are not delivered.
      await call('POST', '/subscribers', { email: 'after-disable@example.org', status: 'subscribed' });
      await new Promise((r) => setTimeout(r, 100));
      expect(rx.received).toHaveLength(5);
    } finally {
      await rx.close();
    }
  });

  it('a success resets the failure count; a later delivery can overtake one waiting for its retry', async () => {
    const rx = await startReceiver((n) => (n === 1 ? 503 : 200));
    // A slower clock here (1 min -> 600 ms) so the second event is sent while the first waits.
    const slow = await withSim({ contacts: 5, allowHttpWebhookUrls: true, webhookTimeScale: 0.01 });
    const call = slow.call;
    try {
      const hook = await call('POST', '/webhooks', { name: 'order', url: rx.url, events: ['contact.created'] });
      await call('POST', '/subscribers', { email: 'order1@example.org', status: 'subscribed' });
      await until(() => rx.received.length >= 1);
      await call('POST', '/subscribers', { email: 'order2@example.org', status: 'subscribed' });
      await until(() => rx.received.length >= 3, 5000);
      const emails = rx.received.map((r) => (JSON.parse(r.raw) as Json).data.contact.email);
      expect(emails).toEqual(['order1@example.org', 'order2@example.org', 'order1@example.org']);
      const ids = rx.received.map((r) => r.headers['x-service-delivery']);
      expect(ids[0]).toBe(ids[2]);
      const d = await call('GET', `/webhooks/${hook.json.webhook.id}/deliveries?status=success`);
      expect(d.json.deliveries).toHaveLength(2);
      expect((await call('GET', `/webhooks/${hook.json.webhook.id}/deliveries?status=bogus`)).status).toBe(400);
      const paged = await call('GET', `/webhooks/${hook.json.webhook.id}/deliveries?per_page=1&page=2`);
      expect(paged.json.pagination).toMatchObject({ total: 2, per_page: 1, current_page: 2, last_page: 2 });
      expect((await call('GET', '/webhooks')).json.webhooks.find((x: Json) => x.id === hook.json.webhook.id).status).toBe('active');
    } finally {
      await slow.sim.close();
      await rx.close();
    }
  });

  it('a receiver that does not answer within the (scaled, floor 1 s) timeout counts as a failure and is retried', async () => {
    let calls = 0;
    const hang = createServer((req, res) => {
      calls++;
      req.resume();
      if (calls > 1) res.writeHead(204).end();
      // The first request is never answered.
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/hook`;
    try {
      const hook = await call('POST', '/webhooks', { name: 'slow', url, events: ['contact.deleted'] });
      const started = Date.now();
      await call('DELETE', '/subscribers/9');
      await until(() => calls >= 2, 8000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      await sim.settleWebhooks(3000);
      const d = sim.truth().deliveries.filter((x) => x.webhookId === hook.json.webhook.id);
      expect(d).toHaveLength(1);
      expect(d[0]).toMatchObject({ status: 'success', attempts: 2, responseCode: 204 });
      await call('DELETE', `/webhooks/${hook.json.webhook.id}`);
    } finally {
      hang.closeAllConnections();
      await new Promise<void>((r) => hang.close(() => r()));
    }
  });

  it('under churn, a healthy receiver gets every event once, in delivery order', async () => {
    const rx = await startReceiver();
    try {
      const hook = await call('POST', '/webhooks', { name: 'churn', url: rx.url, events: ['contact.created', 'contact.updated', 'contact.deleted'] });
      const churn = sim.churn({ insertsPerSec: 100, updatesPerSec: 200, deletesPerSec: 50 });
      await new Promise((r) => setTimeout(r, 400));
      await churn.stop();
      await sim.settleWebhooks(8000);
      const done = churn.counts();
      const ids = rx.received.map((r) => Number(r.headers['x-service-delivery']));
      expect(ids.length).toBeGreaterThanOrEqual(done.inserts + done.updates + done.deletes);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const log = sim.truth().deliveries.filter((d) => d.webhookId === hook.json.webhook.id);
      expect(log.every((d) => d.status === 'success')).toBe(true);
      expect(log).toHaveLength(ids.length);
      await call('DELETE', `/webhooks/${hook.json.webhook.id}`);
    } finally {
      await rx.close();
    }
  });

  it('POST /webhooks/{id}/test sends a signed test payload', async () => {
    const rx = await startReceiver();
    try {
      const hook = await call('POST', '/webhooks', { name: 'test', url: rx.url, events: ['contact.updated'], secret: 'test-secret-abc' });
      const r = await call('POST', `/webhooks/${hook.json.webhook.id}/test`);
      expect(r.status).toBe(200);
      expect(rx.received).toHaveLength(1);
      const got = rx.received[0] as Received;
      expect(got.headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', 'test-secret-abc').update(got.raw).digest('hex')}`);
      expect((await call('POST', '/webhooks/999/test')).status).toBe(404);
    } finally {
      await rx.close();
    }
  });
});
