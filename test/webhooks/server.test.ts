import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withWebhookService } from '../../src/webhooks/webhook-service.js';
import { makeDelivery, withTempDir } from './helpers.js';

const SECRET = 'server-test-secret-0123456789';

const withService = <T>(fn: (s: { url: string; base: string }) => Promise<T>) =>
  withTempDir((dir) =>
    withWebhookService({ spoolDir: join(dir, 'spool'), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }), maxBodyBytes: 64 * 1024 }, (s) =>
      fn({ url: s.url, base: new URL(s.url).origin }),
    ),
  );

/** Streams a chunked body of `size` bytes with node:http and returns the status the server answered. */
function postChunked(url: string, headers: Record<string, string>, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('webhook HTTP server', () => {
  it('logs outcomes without secrets, signatures or bodies', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    await withTempDir((dir) =>
      withWebhookService({ spoolDir: join(dir, 'spool'), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }), logger }, async (s) => {
        const d = makeDelivery({ secret: SECRET, data: { contact: { id: 7, email: 'private-person@example.com' } } });
        for (const headers of [d.headers, { ...d.headers, 'x-service-signature': `sha256=${'ab'.repeat(32)}` }]) {
          const res = await request(s.url, { method: 'POST', headers, body: d.body });
          await res.body.dump();
        }
        const unknown = makeDelivery({ secret: SECRET, event: 'contact.merged', data: { note: 'private-note-text' } });
        await (await request(s.url, { method: 'POST', headers: unknown.headers, body: unknown.body })).body.dump();
      }),
    );
    const text = lines.join('');
    expect(text).toContain('webhook delivery stored');
    expect(text).toContain('bad_signature');
    expect(text).toContain('unknown event name');
    for (const secretish of [SECRET, 'private-person@example.com', 'private-note-text', 'ab'.repeat(32), 'sha256=']) expect(text).not.toContain(secretish);
  });

  it('accepts deliveries over HTTP, and serves health, readiness and counters by outcome', async () => {
    await withService(async ({ url, base }) => {
      const d = makeDelivery({ secret: SECRET });
      const ok = await request(url, { method: 'POST', headers: d.headers, body: d.body });
      expect(ok.statusCode).toBe(202);
      expect(ok.headers['content-type']).toBe('application/json');
      expect(await ok.body.json()).toEqual({ status: 'accepted' });
      // Every later copy of a stored delivery gets the same answer.
      for (let i = 0; i < 2; i++) {
        const dup = await request(url, { method: 'POST', headers: d.headers, body: d.body });
        expect(dup.statusCode).toBe(200);
        expect(await dup.body.json()).toEqual({ status: 'duplicate' });
      }
      const bad = await request(url, { method: 'POST', headers: { ...d.headers, 'x-service-signature': 'sha256=00' }, body: d.body });
      expect(bad.statusCode).toBe(401);
      expect(await bad.body.json()).toMatchObject({ status: 'rejected', reason: 'bad_signature' });
      const get = await request(url, { method: 'GET' });
      expect(get.statusCode).toBe(405);
      expect(get.headers.allow).toBe('POST');
      await get.body.dump();

      const health = await request(`${base}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
      const ready = await request(`${base}/readyz`);
      expect(ready.statusCode).toBe(200);
      expect(await ready.body.json()).toMatchObject({ status: 'ready', spool: { healthy: true, committedSeq: 1 } });
      const metrics = await (await request(`${base}/metrics`)).body.text();
      expect(metrics).toContain('crmsync_webhook_deliveries_total{outcome="accepted",reason="accepted"} 1');
      expect(metrics).toContain('crmsync_webhook_deliveries_total{outcome="duplicate",reason="duplicate"} 2');
      expect(metrics).toContain('crmsync_webhook_deliveries_total{outcome="rejected",reason="bad_signature"} 1');
      expect(metrics).toContain('crmsync_webhook_deliveries_total{outcome="rejected",reason="method_not_allowed"} 1');
      expect(metrics).not.toContain(SECRET);
      const other = await request(`${base}/elsewhere`);
      expect(other.statusCode).toBe(404);
      await other.body.dump();
    });
  });

  it('answers a delivery posted to another path with 404 naming the path, not 405', async () => {
    await withService(async ({ url, base }) => {
      const d = makeDelivery({ secret: SECRET });
      const misrouted = await request(`${base}/webhook`, { method: 'POST', headers: d.headers, body: d.body });
      expect(misrouted.statusCode).toBe(404);
      expect(await misrouted.body.json()).toEqual({ status: 'not_found', message: `Post deliveries to ${new URL(url).pathname}.` });
      // The GET endpoints still refuse other methods.
      const postHealth = await request(`${base}/healthz`, { method: 'POST', headers: d.headers, body: d.body });
      expect(postHealth.statusCode).toBe(405);
      expect(postHealth.headers.allow).toBe('GET');
      await postHealth.body.dump();
    });
  });

  it('stores a body that arrives in pieces byte for byte, with a Content-Length or chunked', async () => {
    await withTempDir((dir) =>
      withWebhookService({ spoolDir: join(dir, 'spool'), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async (s) => {
        const sent: Buffer[] = [];
        for (const chunked of [false, true]) {
          const d = makeDelivery({ secret: SECRET, data: { contact: { id: 7, note: `é${'x'.repeat(40_000)}${chunked}` } } });
          sent.push(d.body);
          const status = await new Promise<number>((resolve, reject) => {
            const headers = chunked ? { ...d.headers, 'transfer-encoding': 'chunked' } : { ...d.headers, 'content-length': String(d.body.length) };
            const req = httpRequest(s.url, { method: 'POST', headers }, (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            });
            req.on('error', reject);
            // Four pieces, each in its own event-loop turn: the receiver reads them as separate chunks.
            const piece = Math.ceil(d.body.length / 4);
            let at = 0;
            const next = (): void => {
              if (at >= d.body.length) return void req.end();
              req.write(d.body.subarray(at, at + piece));
              at += piece;
              setTimeout(next, 5);
            };
            req.flushHeaders();
            next();
          });
          expect(status).toBe(202);
        }
        const stored = await s.spool.read(0, 10);
        expect(stored.map((r) => r.body.equals(sent[stored.indexOf(r)]!))).toEqual([true, true]);
      }),
    );
  });

  it('names the fix when its port is taken', async () => {
    await withService(async ({ base }) => {
      const port = Number(new URL(base).port);
      await withTempDir(async (dir) => {
        await expect(
          withWebhookService({ spoolDir: join(dir, 'other'), host: '127.0.0.1', port, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async () => undefined),
        ).rejects.toThrow(/already in use; choose another with --port or CRMSYNC_WEBHOOK_PORT/);
      });
    });
  });

  it('answers 413 to an oversized streamed body without buffering it, and keeps serving', async () => {
    await withService(async ({ url }) => {
      const d = makeDelivery({ secret: SECRET });
      const { 'content-length': _cl, ...headers } = d.headers;
      expect(await postChunked(url, headers, 8 * 1024 * 1024)).toBe(413);
      const declared = await request(url, { method: 'POST', headers: { ...d.headers }, body: Buffer.alloc(100 * 1024, 0x20) });
      expect(declared.statusCode).toBe(413);
      await declared.body.dump();
      const ok = await request(url, { method: 'POST', headers: d.headers, body: d.body });
      expect(ok.statusCode).toBe(202);
      await ok.body.dump();
    });
  });
  it('frames each answer on a kept-alive connection: head, content-length and body, pipelined requests in order', async () => {
    // The usual answers go out as node:http's head with the body appended in one write: a body
    // sent twice, or not at all, or a wrong content-length would break every request after it.
    await withService(async ({ url }) => {
      const u = new URL(url);
      const first = makeDelivery({ secret: SECRET });
      const second = makeDelivery({ secret: SECRET });
      const raw = (d: ReturnType<typeof makeDelivery>): string =>
        `POST ${u.pathname} HTTP/1.1\r\nhost: ${u.host}\r\n${Object.entries(d.headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}content-length: ${d.body.length}\r\n\r\n${d.body.toString('latin1')}`;
      const answers = await new Promise<{ status: number; headers: Record<string, string>; body: string }[]>((resolve, reject) => {
        const socket = connect(Number(u.port), u.hostname, () => socket.write(raw(first) + raw(first) + raw(second)));
        let text = '';
        const parsed: { status: number; headers: Record<string, string>; body: string }[] = [];
        socket.setEncoding('latin1');
        socket.on('error', reject);
        socket.on('data', (chunk: string) => {
          text += chunk;
          for (;;) {
            const end = text.indexOf('\r\n\r\n');
            if (end < 0) break;
            const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
            const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
            const length = Number(headers['content-length']);
            if (text.length < end + 4 + length) break;
            parsed.push({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)?.[1] ?? NaN), headers, body: text.slice(end + 4, end + 4 + length) });
            text = text.slice(end + 4 + length);
          }
          if (parsed.length === 3) {
            socket.destroy();
            resolve(parsed);
          }
        });
      });
      expect(answers.map((a) => [a.status, a.headers['content-type'], JSON.parse(a.body)])).toEqual([
        [202, 'application/json', { status: 'accepted' }],
        [200, 'application/json', { status: 'duplicate' }],
        [202, 'application/json', { status: 'accepted' }],
      ]);
      for (const a of answers) expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.body));
    });
  });
});
