import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { handleWebhookRequest } from '../../src/webhooks/handle-webhook-request.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withWebhookService } from '../../src/webhooks/webhook-service.js';
import { makeDelivery, withTempDir } from './helpers.js';
import { createRng } from '../../src/simulator/rng.js';

const SECRET = 'fuzz-secret-0123456789abcdef';
const REQUESTS = 3_000;
const TIME_BUDGET_MS = 25_000;

/** Deterministic PRNG (the simulator's mulberry32) so a failure can be replayed from its seed. */
const rng = createRng;

const sign = (body: Buffer, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('fuzzing the ingest endpoint', () => {
  it('survives thousands of random and mutated requests and accepts nothing unsigned', async () => {
    const seed = 20261121;
    const rand = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));

    await withTempDir((dir) =>
      withWebhookService({ spoolDir: join(dir, 'spool'), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }), maxBodyBytes: 8 * 1024 }, async (service) => {
        const deps = { secrets: createSecretResolver({ secret: new Secret(SECRET) }), spool: service.spool, metrics: service.metrics, maxBodyBytes: 8 * 1024 };
        const started = Date.now();
        const statuses = new Map<number, number>();
        let accepted = 0;
        let i = 0;
        for (; i < REQUESTS && Date.now() - started < TIME_BUDGET_MS; i++) {
          const base = makeDelivery({ secret: SECRET, deliveryId: `fuzz-${i}`, event: pick(['contact.updated', 'email.opened', 'x.unknown', 'commerce.order_created']) });
          let body = base.body;
          const headers: Record<string, string | string[]> = { ...base.headers };
          let method = 'POST';
          // Mutations; some keep the signature valid by re-signing on purpose.
          const m = Math.floor(rand() * 14);
          let resign = false;
          if (m === 0) body = randomBytes(Math.floor(rand() * 300));
          if (m === 1) {
            body = Buffer.from(body);
            const k = Math.floor(rand() * body.length);
            body[k] = body[k]! ^ (1 << Math.floor(rand() * 8));
          }
          if (m === 2) body = body.subarray(0, Math.floor(rand() * body.length));
          if (m === 3) headers['x-service-signature'] = `sha256=${randomBytes(32).toString('hex')}`;
          if (m === 4) headers['x-service-signature'] = pick(['', 'sha256=', 'md5=abc', sign(body).toUpperCase(), `${sign(body)} `, sign(body, 'wrong-secret-0123456789')]);
          if (m === 5) delete headers[pick(['x-service-signature', 'x-service-delivery', 'x-service-webhook-id', 'x-service-event', 'content-type'])];
          if (m === 6) headers['content-type'] = pick(['text/plain', 'application/jsonx', 'application/json; charset=utf-8', '', 'multipart/form-data']);
          if (m === 7) method = pick(['GET', 'PUT', 'DELETE', 'PATCH', 'post']);
          if (m === 8) {
            body = Buffer.from(pick(['null', '[]', '{}', '"x"', '1', '{"event":1}', '{"event":"contact.updated","timestamp":"nope","webhook_id":1,"data":{}}', '{"a":'.repeat(50)]));
            resign = rand() < 0.7;
          }
          if (m === 9) {
            body = Buffer.alloc(9000 + Math.floor(rand() * 5000), 0x20);
            resign = true;
          }
          if (m === 10) headers['x-service-delivery'] = pick(['', ' ', 'a'.repeat(500), 'ünï', 'fuzz-0', `dup-${Math.floor(rand() * 5)}`]);
          if (m === 11) headers['x-service-webhook-id'] = pick(['0', '-1', '1e3', '99999999999999999999', ' 1', '2']);
          if (m === 12) headers['x-service-signature'] = [sign(body), sign(body)];
          if (m === 13) {
            const json = JSON.parse(body.toString()) as Record<string, unknown>;
            json.data = pick([null, [], 'x', { contact: { id: 'abc' } }, { deep: { deeper: [1, 2, { x: 'y'.repeat(100) }] } }]);
            if (rand() < 0.3) json.webhook_id = 2;
            body = Buffer.from(JSON.stringify(json));
            resign = rand() < 0.8;
          }
          if (resign) headers['x-service-signature'] = sign(body);
          const sigHeader = headers['x-service-signature'];
          // Hex case and surrounding spaces do not change the HMAC a signature carries.
          const validlySigned = typeof sigHeader === 'string' && sigHeader.trim().toLowerCase() === sign(body) && method === 'POST';

          const chunked = rand() < 0.3;
          const bodyIn: AsyncIterable<Uint8Array> | Uint8Array = chunked
            ? (async function* () {
                for (let o = 0; o < body.length; o += 100) yield body.subarray(o, o + 100);
              })()
            : body;
          const res = await handleWebhookRequest({ method, headers, body: bodyIn }, deps);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expect([200, 202, 400, 401, 405, 413, 415]).toContain(res.status);
          if (res.status === 200 || res.status === 202) {
            expect(validlySigned, `request ${i} (mutation ${m}, seed ${seed}) was acknowledged without a valid signature`).toBe(true);
            if (res.status === 202) accepted++;
          }
        }
        expect(i).toBeGreaterThanOrEqual(1_000);
        // Every stored delivery carries a valid signature over exactly the stored bytes.
        const stored = await service.spool.read(0, 100_000);
        expect(stored.length).toBe(accepted);
        for (const r of stored) {
          const env = JSON.parse(r.body.toString()) as { event: string };
          expect(env.event).toBe(r.event);
        }
        expect(statuses.get(202)).toBeGreaterThan(50);
        expect(statuses.get(401)).toBeGreaterThan(50);

        // Raw garbage on the socket: the server must keep answering.
        const port = service.port;
        for (let g = 0; g < 150; g++) {
          await new Promise<void>((resolve) => {
            const sock = connect(port, '127.0.0.1', () => {
              sock.end(
                g % 3 === 0 ? randomBytes(200) : Buffer.from(`POST /webhooks/crm HTTP/1.1\r\nHost: x\r\nContent-Length: ${Math.floor(rand() * 1e9)}\r\n\r\n${randomBytes(50).toString('latin1')}`),
              );
            });
            sock.on('data', () => undefined);
            sock.on('error', () => resolve());
            sock.on('close', () => resolve());
            sock.setTimeout(2_000, () => sock.destroy());
          });
        }
        const health = await request(`${new URL(service.url).origin}/healthz`);
        expect(health.statusCode).toBe(200);
        await health.body.dump();
        expect((await service.spool.read(0, 100_000)).length).toBe(accepted);
      }),
    );
  });
});
