import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { handleWebhookRequest, type WebhookHandlerDeps } from '../../src/webhooks/handle-webhook-request.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withSpool, type Spool } from '../../src/webhooks/spool.js';
import { createWebhookMetrics } from '../../src/webhooks/webhook-metrics.js';
import { signBody } from '../../src/webhooks/verify-signature.js';
import { makeDelivery, withTempDir } from './helpers.js';

const SECRET = 'catch-all-secret-0123456789';

async function withHandler<T>(fn: (deps: WebhookHandlerDeps, spool: Spool, dir: string) => Promise<T>, secrets?: (dir: string) => WebhookHandlerDeps['secrets']): Promise<T> {
  return withTempDir((dir) =>
    withSpool({ dir: join(dir, 'spool') }, (spool) => {
      const deps: WebhookHandlerDeps = {
        secrets: secrets ? secrets(dir) : createSecretResolver({ secret: new Secret(SECRET) }),
        spool,
        metrics: createWebhookMetrics(),
        maxBodyBytes: 4096,
      };
      return fn(deps, spool, dir);
    }),
  );
}

const post = (d: { headers: Record<string, string>; body: Buffer }, deps: WebhookHandlerDeps, method = 'POST') => handleWebhookRequest({ method, headers: d.headers, body: d.body }, deps);

describe('handleWebhookRequest', () => {
  it('accepts a signed delivery only after it is in the spool, and acknowledges a replay without storing it twice', async () => {
    await withHandler(async (deps, spool) => {
      const d = makeDelivery({ secret: SECRET });
      const first = await post(d, deps);
      expect(first.status).toBe(202);
      const stored = await spool.read(0, 10);
      expect(stored.map((r) => r.deliveryId)).toEqual([d.deliveryId]);
      expect(stored[0]!.body.equals(d.body)).toBe(true);
      const again = await post(d, deps);
      expect(again).toMatchObject({ status: 200, body: { status: 'duplicate' } });
      expect(await spool.read(0, 10)).toHaveLength(1);
      expect(deps.metrics.snapshot().received).toEqual({ accepted: 1, duplicate: 1 });
    });
  });

  it('answers concurrent copies of one delivery once accepted and otherwise duplicate', async () => {
    await withHandler(async (deps, spool) => {
      const d = makeDelivery({ secret: SECRET });
      const results = await Promise.all(Array.from({ length: 5 }, () => post(d, deps)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 202]);
      expect(await spool.read(0, 10)).toHaveLength(1);
    });
  });

  it.each([
    ['wrong method', (d: ReturnType<typeof makeDelivery>) => ({ ...d, method: 'PUT' }), 405, 'method_not_allowed'],
    ['wrong content type', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'content-type': 'text/plain' } }), 415, 'unsupported_media_type'],
    ['form content type', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type'],
    ['declared oversize', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'content-length': '999999' } }), 413, 'payload_too_large'],
    ['actual oversize', (d: ReturnType<typeof makeDelivery>) => ({ ...d, body: Buffer.alloc(5000, 32) }), 413, 'payload_too_large'],
    ['missing signature header', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: omit(d.headers, 'x-service-signature') }), 400, 'missing_headers'],
    ['missing delivery header', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: omit(d.headers, 'x-service-delivery') }), 400, 'missing_headers'],
    ['missing webhook id header', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: omit(d.headers, 'x-service-webhook-id') }), 400, 'missing_headers'],
    ['missing event header', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: omit(d.headers, 'x-service-event') }), 400, 'missing_headers'],
    ['non-numeric webhook id', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'x-service-webhook-id': 'abc' } }), 400, 'missing_headers'],
    ['bad signature', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'x-service-signature': `sha256=${'0'.repeat(64)}` } }), 401, 'bad_signature'],
    [
      'signature without prefix',
      (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'x-service-signature': d.headers['x-service-signature']!.slice(7) } }),
      401,
      'bad_signature',
    ],
    ['tampered body', (d: ReturnType<typeof makeDelivery>) => ({ ...d, body: Buffer.from(d.body.toString().replace('a@example.com', 'x@example.com')) }), 401, 'bad_signature'],
    ['wrong secret', (d: ReturnType<typeof makeDelivery>) => ({ ...d, headers: { ...d.headers, 'x-service-signature': signBody(d.body, 'another-secret-0123456789') } }), 401, 'bad_signature'],
  ])('rejects %s', async (_name, mutate, status, reason) => {
    await withHandler(async (deps, spool) => {
      const { method, ...d } = { method: 'POST', ...mutate(makeDelivery({ secret: SECRET })) };
      const r = await post(d, deps, method);
      expect(r).toMatchObject({ status, body: { reason } });
      expect(await spool.read(0, 10)).toHaveLength(0);
      expect(deps.metrics.snapshot().received).toEqual({ [reason]: 1 });
    });
  });

  it('accepts a body of exactly the limit and refuses one byte more', async () => {
    await withHandler(async (deps) => {
      const fit = (size: number) => {
        const d = makeDelivery({ secret: SECRET, data: { pad: '' } });
        const pad = 'x'.repeat(size - d.body.length);
        const body = Buffer.from(d.body.toString().replace('"pad":""', `"pad":"${pad}"`));
        return { body, headers: { ...d.headers, 'x-service-signature': signBody(body, SECRET) } };
      };
      const exact = fit(4096);
      expect(exact.body.length).toBe(4096);
      expect((await post(exact, deps)).status).toBe(202);
      const over = fit(4097);
      expect((await post(over, deps)).status).toBe(413);
    });
  });

  it('rejects malformed JSON and a bad envelope even when correctly signed', async () => {
    await withHandler(async (deps, spool) => {
      const signed = (body: Buffer, event = 'contact.updated') => ({
        body,
        headers: { ...makeDelivery({ secret: SECRET }).headers, 'x-service-event': event, 'x-service-signature': signBody(body, SECRET) },
      });
      expect((await post(signed(Buffer.from('{"event":')), deps)).body.reason).toBe('malformed_json');
      expect((await post(signed(Buffer.from([0x7b, 0xff, 0x7d])), deps)).body.reason).toBe('invalid_utf8');
      expect((await post(signed(Buffer.from('[]')), deps)).body.reason).toBe('invalid_envelope');
      const noData = Buffer.from(JSON.stringify({ event: 'contact.updated', timestamp: '2026-01-01T00:00:00Z', webhook_id: 1 }));
      expect((await post(signed(noData), deps)).status).toBe(400);
      const badTime = Buffer.from(JSON.stringify({ event: 'contact.updated', timestamp: 'yesterday', webhook_id: 1, data: {} }));
      expect((await post(signed(badTime), deps)).body.reason).toBe('invalid_envelope');
      const otherEvent = Buffer.from(JSON.stringify({ event: 'contact.deleted', timestamp: '2026-01-01T00:00:00Z', webhook_id: 1, data: {} }));
      expect((await post(signed(otherEvent), deps)).body.reason).toBe('invalid_envelope');
      expect(await spool.read(0, 10)).toHaveLength(0);
    });
  });

  it('stores and flags a correctly signed delivery with an unknown event name', async () => {
    await withHandler(async (deps, spool) => {
      const d = makeDelivery({ secret: SECRET, event: 'contact.merged', data: { from: 1, into: 2 } });
      expect((await post(d, deps)).status).toBe(202);
      const [rec] = await spool.read(0, 10);
      expect(rec).toMatchObject({ event: 'contact.merged', known: false, deliveryId: d.deliveryId });
    });
  });

  it('verifies per-webhook secrets from the file, accepts both secrets during a rotation, and picks up a rewritten file', async () => {
    await withHandler(
      async (deps, _spool, dir) => {
        const file = join(dir, 'secrets.json');
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-3-aaaaaaaa', webhookId: 3 }), deps)).status).toBe(202);
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-4-previous', webhookId: 4 }), deps)).status).toBe(202);
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-4-current1', webhookId: 4 }), deps)).status).toBe(202);
        // One webhook's secret does not open another's deliveries; an unlisted id has no secret.
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-3-aaaaaaaa', webhookId: 4 }), deps)).body.reason).toBe('bad_signature');
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-3-aaaaaaaa', webhookId: 5 }), deps)).body.reason).toBe('unknown_webhook');
        // The next rotation, as `register --rotate` writes it: new secret first, the previous one kept,
        // the oldest dropped. The first delivery signed with it is verified at once (the file is
        // re-read on a signature miss), long before the periodic reload.
        await new Promise((r) => setTimeout(r, 120));
        writeFileSync(file, JSON.stringify({ 3: 'secret-of-webhook-3-aaaaaaaa', 4: ['secret-of-webhook-4-rotated22', 'secret-of-webhook-4-current1'] }));
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-4-rotated22', webhookId: 4 }), deps)).status).toBe(202);
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-4-current1', webhookId: 4 }), deps)).status).toBe(202);
        expect((await post(makeDelivery({ secret: 'secret-of-webhook-4-previous', webhookId: 4 }), deps)).body.reason).toBe('bad_signature');
      },
      (dir) => {
        const file = join(dir, 'secrets.json');
        writeFileSync(file, JSON.stringify({ 3: 'secret-of-webhook-3-aaaaaaaa', 4: ['secret-of-webhook-4-current1', 'secret-of-webhook-4-previous'] }));
        return createSecretResolver({ secretsFile: file, fileRequired: true, reloadIntervalMs: 60_000 });
      },
    );
  });

  it('answers 503 when the spool cannot store the delivery, so the CRM retries', async () => {
    await withHandler(async (deps) => {
      const { SpoolUnavailableError } = await import('../../src/webhooks/errors.js');
      const failing = { ...deps, spool: { append: () => Promise.reject(new SpoolUnavailableError('disk full')) } };
      const r = await post(makeDelivery({ secret: SECRET }), failing);
      expect(r.status).toBe(503);
      expect(r.headers?.['retry-after']).toBeDefined();
    });
  });
});

function omit(h: Record<string, string>, key: string): Record<string, string> {
  const { [key]: _drop, ...rest } = h;
  return rest;
}
