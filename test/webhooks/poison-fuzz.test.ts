import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createCrmClient } from '../../src/crm/index.js';
import { Secret } from '../../src/secret.js';
import { createRng } from '../../src/simulator/rng.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { signBody } from '../../src/webhooks/verify-signature.js';
import { withWebhookService, type WebhookService } from '../../src/webhooks/webhook-service.js';
import { makeDelivery, withTempDir, type Delivery } from './helpers.js';
import { withOwnerApply } from './owner-apply.js';

const SECRET = 'poison-fuzz-secret-0123456789';
const SEED = 20261125;
const ROUNDS = 2;
const FLOOD = 1_100;

/** A signed delivery of `body` exactly as given (the signature covers the raw bytes). */
function rawDelivery(body: Buffer, event: string, deliveryId: string): Delivery {
  return {
    deliveryId,
    body,
    headers: { 'content-type': 'application/json', 'x-service-event': event, 'x-service-signature': signBody(body, SECRET), 'x-service-webhook-id': '1', 'x-service-delivery': deliveryId },
  };
}

const envelope = (event: string, data: unknown, timestamp = new Date().toISOString()): string =>
  `{"event":"${event}","timestamp":"${timestamp}","webhook_id":1,"data":${typeof data === 'string' ? data : JSON.stringify(data)}}`;

async function post(s: WebhookService, d: Delivery): Promise<{ status: number; reason?: string }> {
  const res = await request(s.url, { method: 'POST', headers: d.headers, body: d.body });
  const body = (await res.body.json()) as { reason?: string };
  return { status: res.statusCode, ...(body.reason ? { reason: body.reason } : {}) };
}

describe('poisonous, replayed and flooding deliveries (bounded fuzz)', () => {
  it('refuses or isolates each one, and the valid delivery sent next is applied within 5 s', async () => {
    const rand = createRng(SEED);
    const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
    await withTempDir(async (dir) => {
      const sim = await startSimulator({ seed: 17, contacts: 10, mode: 'real' });
      const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, retry: { maxRetries: 0 } });
      const contactId = sim.truth().contacts[0]!.id;
      let n = 0;
      const valid = (): Delivery =>
        makeDelivery({ secret: SECRET, event: 'email.opened', deliveryId: `valid-${++n}`, data: { email: { id: 10_000 + n, subject: 'S', contact_id: contactId, campaign_id: null } } });
      const validIds: string[] = [];
      try {
        // The receiver verifies and spools; the warehouse worker's activity applies, over its owner.
        await withOwnerApply({ dir, refetcher: createClientRefetcher(client) }, async (a) => {
          const acts = a.activities();
          await withWebhookService({ spoolDir: a.spoolDir, host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async (s) => {
            // Each case: what is sent, and what the receiver must answer.
            type Case = { name: string; make: (i: number) => Delivery[]; expect: { status: number; reason?: string }[]; after?: (i: number) => Promise<void> };
            const q = (sql: string) => a.query(sql);
            const cases: Case[] = [
              {
                name: 'deep nesting',
                make: (i) => {
                  const depth = int(65, 12_000);
                  return [rawDelivery(Buffer.from(envelope('email.opened', `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)), 'email.opened', `deep-${i}`)];
                },
                expect: [{ status: 400, reason: 'json_too_deep' }],
              },
              {
                name: 'lone surrogate',
                make: (i) => {
                  const unit = rand() < 0.5 ? `\\ud${int(0x800, 0xbff).toString(16)}` : `\\ud${int(0xc00, 0xfff).toString(16)}`;
                  return [rawDelivery(Buffer.from(envelope('email.opened', `{"email":{"id":${20_000 + i},"subject":"x${unit}y","contact_id":${contactId}}}`)), 'email.opened', `surrogate-${i}`)];
                },
                expect: [{ status: 400, reason: 'invalid_utf8' }],
              },
              {
                name: 'byte-order mark',
                make: (i) => [
                  rawDelivery(
                    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(envelope('email.clicked', { email: { id: 30_000 + i, contact_id: contactId, url: 'https://x.example/' } }))]),
                    'email.clicked',
                    `bom-${i}`,
                  ),
                ],
                expect: [{ status: 202 }],
                // Applied like any delivery: the applier reads the body the way the receiver did.
                after: async (i) => {
                  expect(await q(`SELECT status FROM webhook_events WHERE delivery_id = 'bom-${i}'`)).toEqual([{ status: 'applied' }]);
                  expect(await q(`SELECT count(*)::INT AS n FROM email_events WHERE delivery_id = 'bom-${i}'`)).toEqual([{ n: 1 }]);
                },
              },
              {
                // The real CRM answers 404 rest_no_route for an id its route pattern refuses.
                name: '404 rest_no_route on refetch',
                make: (i) => [
                  makeDelivery({ secret: SECRET, event: 'contact.updated', deliveryId: `noroute-${i}`, data: { contact: { id: 1_000_000_000_000 + int(0, 1e9), email: 'x@example.com' } } }),
                ],
                expect: [{ status: 202 }],
                after: async (i) => {
                  const dead = await q(`SELECT reason, error FROM webhook_dead_letters WHERE delivery_id = 'noroute-${i}'`);
                  expect(dead).toEqual([{ reason: 'record_error', error: expect.stringMatching(/CRM_NOT_FOUND/) }]);
                },
              },
              {
                name: 'replayed body, new delivery id',
                make: (i) => {
                  const first = makeDelivery({ secret: SECRET, event: 'email.opened', deliveryId: `replay-${i}-a`, data: { email: { id: 40_000 + i, subject: 'R', contact_id: contactId } } });
                  return [first, { ...first, deliveryId: `replay-${i}-b`, headers: { ...first.headers, 'x-service-delivery': `replay-${i}-b` } }];
                },
                expect: [{ status: 202 }, { status: 200 }],
                after: async (i) => {
                  expect(await q(`SELECT delivery_id FROM email_events WHERE delivery_id LIKE 'replay-${i}-%'`)).toEqual([{ delivery_id: `replay-${i}-a` }]);
                },
              },
              {
                name: 'timestamp in 2001',
                make: (i) => [
                  makeDelivery({
                    secret: SECRET,
                    event: 'email.opened',
                    deliveryId: `old-${i}`,
                    timestamp: `2001-0${int(1, 9)}-1${int(0, 9)}T12:00:00Z`,
                    data: { email: { id: 50_000 + i, contact_id: contactId } },
                  }),
                ],
                expect: [{ status: 400, reason: 'event_time_out_of_range' }],
              },
              {
                name: 'timestamp in 2099',
                make: (i) => [
                  makeDelivery({
                    secret: SECRET,
                    event: 'email.opened',
                    deliveryId: `future-${i}`,
                    timestamp: `2099-0${int(1, 9)}-1${int(0, 9)} 12:00:00`,
                    data: { email: { id: 60_000 + i, contact_id: contactId } },
                  }),
                ],
                expect: [{ status: 400, reason: 'event_time_out_of_range' }],
              },
            ];
            let i = 0;
            for (let round = 0; round < ROUNDS; round++) {
              const order = [...cases].sort(() => rand() - 0.5);
              for (const c of order) {
                i++;
                const got = [];
                for (const d of c.make(i)) got.push(await post(s, d));
                expect(got, `${c.name} (round ${round}, seed ${SEED})`).toEqual(c.expect);
                const next = valid();
                expect(await post(s, next)).toEqual({ status: 202 });
                validIds.push(next.deliveryId);
                // One activity call applies past the valid delivery: nothing before it holds it back.
                const [r] = await a.applyUntil(acts, s.spool.stats().committedSeq, { rounds: 1 });
                expect(r, `after ${c.name} (round ${round})`).toMatchObject({ appliedSeq: s.spool.stats().committedSeq });
                await c.after?.(i);
              }
            }
          });
          const rows = await a.owner.run(async (w) => ({
            valid: await w.query(`SELECT count(*)::INT AS n FROM webhook_events WHERE delivery_id LIKE 'valid-%' AND status = 'applied'`),
            refused: await w.query(`SELECT count(*)::INT AS n FROM webhook_events WHERE regexp_matches(delivery_id, '^(deep|surrogate|old|future)-')`),
          }));
          expect(rows.valid).toEqual([{ n: validIds.length }]);
          expect(rows.refused).toEqual([{ n: 0 }]);
        });
      } finally {
        await client.close();
        await sim.close();
      }
    });
  });

  it('keeps taking deliveries from one address while another holds 1,100 idle sockets, and closes those within the header timeout', async () => {
    await withTempDir((dir) =>
      withWebhookService({ spoolDir: join(dir, 'spool'), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async (s) => {
        const sockets: Socket[] = [];
        const closed = new Set<Socket>();
        try {
          // Bounded: FLOOD sockets, each connected from 127.0.0.2 and never sending a byte.
          await Promise.all(
            Array.from(
              { length: FLOOD },
              () =>
                new Promise<void>((resolve) => {
                  const sock = connect({ host: '127.0.0.1', port: s.port, localAddress: '127.0.0.2' });
                  sockets.push(sock);
                  sock.on('connect', () => resolve());
                  sock.on('error', () => resolve());
                  sock.on('close', () => {
                    closed.add(sock);
                    resolve();
                  });
                }),
            ),
          );
          for (let k = 0; k < 20; k++) {
            const d = makeDelivery({ secret: SECRET, event: 'email.opened', deliveryId: `through-${k}` });
            expect(await post(s, d)).toEqual({ status: 202 });
          }
          // The flood cannot hold more than its address's share (128 by default).
          expect(s.connections().mostFromOneAddress).toBeLessThanOrEqual(128);
          expect(s.connections().evicted + s.connections().refused).toBeGreaterThan(0);
          // The idle ones still open are closed by the header timeout (5 s, checked each second);
          // a bounded wait for that state. Counted on the server: on a busy machine some of the
          // flood's handshakes overflow the kernel's accept queue and never reach the server at
          // all (the client keeps them half-open until its own retries give up).
          const deadline = Date.now() + 20_000;
          while (s.connections().open > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          expect(s.connections().open).toBe(0);
          expect(closed.size).toBeGreaterThan(0);
        } finally {
          for (const sock of sockets) sock.destroy();
        }
      }),
    );
  });

  it('under pressure closes the oldest idle connection of the busiest address to let a new one in', async () => {
    await withTempDir((dir) =>
      withWebhookService(
        { spoolDir: join(dir, 'spool'), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }), limits: { maxConnections: 50, maxPerAddress: 40 } },
        async (s) => {
          const sockets: Socket[] = [];
          const open = (from: string) =>
            new Promise<Socket>((resolve, reject) => {
              const sock = connect({ host: '127.0.0.1', port: s.port, localAddress: from }, () => resolve(sock));
              sock.on('error', reject);
              sockets.push(sock);
            });
          try {
            const crowd: Socket[] = [];
            for (let k = 0; k < 40; k++) crowd.push(await open('127.0.0.2'));
            for (let k = 0; k < 10; k++) await open('127.0.0.3');
            // Bounded wait until the server has accepted all 50.
            for (let t = 0; t < 100 && s.connections().open < 50; t++) await new Promise((r) => setTimeout(r, 20));
            expect(s.connections().open).toBe(50);
            expect(await post(s, makeDelivery({ secret: SECRET, event: 'email.opened' }))).toEqual({ status: 202 });
            expect(s.connections()).toMatchObject({ evicted: 1, refused: 0, mostFromOneAddress: 39 });
            // The victim was the first socket of the crowded address.
            for (let t = 0; t < 100 && !crowd[0]!.destroyed; t++) await new Promise((r) => setTimeout(r, 20));
            expect(crowd[0]!.destroyed).toBe(true);
          } finally {
            for (const sock of sockets) sock.destroy();
          }
        },
      ),
    );
  });
});
