import { existsSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createCrmClient, type CrmClient } from '../../src/crm/index.js';
import { Secret } from '../../src/secret.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withWebhookService, type WebhookService } from '../../src/webhooks/webhook-service.js';
import { makeDelivery, withTempDir } from './helpers.js';
import { withOwnerApply, type OwnerApply } from './owner-apply.js';

const SECRET = 'applier-test-secret-0123456789';

interface Env extends OwnerApply {
  dir: string;
  sim: RunningSimulator;
  client: CrmClient;
  /** Runs a receiver (verify and spool only) on the test's spool (call again to "restart"). */
  serve<T>(fn: (s: WebhookService) => Promise<T>): Promise<T>;
  post(s: WebhookService, d: ReturnType<typeof makeDelivery>): Promise<number>;
}

/** Simulator, receiver and the warehouse worker's apply activity over its owner, as `crmsync worker` wires them. */
async function withEnv<T>(fn: (env: Env) => Promise<T>, opts: { publishEveryMs?: number; now?: () => number } = {}): Promise<T> {
  return withTempDir(async (dir) => {
    const sim = await startSimulator({ seed: 5, contacts: 20 });
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, retry: { maxRetries: 0 } });
    try {
      return await withOwnerApply({ dir, refetcher: createClientRefetcher(client), ...opts }, (apply) =>
        fn({
          ...apply,
          dir,
          sim,
          client,
          serve: (f) => withWebhookService({ spoolDir: apply.spoolDir, host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, f),
          async post(s, d) {
            const res = await request(s.url, { method: 'POST', headers: d.headers, body: d.body });
            await res.body.dump();
            return res.statusCode;
          },
        }),
      );
    } finally {
      await client.close();
      await sim.close();
    }
  });
}

const contactEvent = (event: string, c: { id: number; email: string; first_name: string | null; status: string }, at: string, deliveryId: string) =>
  makeDelivery({
    secret: SECRET,
    event,
    deliveryId,
    timestamp: at,
    data: { contact: { id: c.id, email: c.email, first_name: c.first_name, last_name: null, status: c.status, created_at: '2026-01-01 00:00:00' } },
  });

const committed = (s: WebhookService) => s.spool.stats().committedSeq;

describe('applying the webhook spool through the warehouse owner (applyWebhookSpool)', () => {
  it('never lets a late, older delivery overwrite newer state, and skips its refetch', async () => {
    await withEnv(async (env) => {
      const id = env.sim.truth().contacts[0]!.id;
      const v1 = env.sim.mutate.updateContact(id, { first_name: 'Version1' });
      const v2 = env.sim.mutate.updateContact(id, { first_name: 'Version2' });
      const gone = env.sim.truth().contacts[1]!;
      env.sim.mutate.deleteContact(gone.id);
      const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
      const acts = env.activities();
      await env.serve(async (s) => {
        // Newest first, as a receiver sees them when the CRM's first attempt of the older one failed
        // and its retry came a minute later.
        expect(await env.post(s, contactEvent('contact.updated', v2, ago(60), 'd-v2'))).toBe(202);
        expect(await env.post(s, contactEvent('contact.deleted', gone, ago(60), 'd-del'))).toBe(202);
        const first = await env.applyUntil(acts, committed(s));
        expect(first.reduce((n, r) => n + r.contactsLoaded, 0)).toBe(1);
        expect(await env.post(s, contactEvent('contact.updated', v1, ago(120), 'd-v1'))).toBe(202);
        expect(await env.post(s, contactEvent('contact.created', { ...gone, first_name: 'Resurrected' }, ago(180), 'd-old-create'))).toBe(202);
        // Older than what was applied: neither is refetched nor loaded.
        const late = await env.applyUntil(acts, committed(s));
        expect(late.reduce((n, r) => n + r.events, 0)).toBe(2);
        expect(late.reduce((n, r) => n + r.refetches, 0)).toBe(0);
        expect(late.reduce((n, r) => n + r.contactsLoaded, 0)).toBe(0);
      });
      const rows = await env.query(`SELECT id, first_name, _deleted_at IS NOT NULL AS deleted FROM contacts ORDER BY id`);
      expect(rows.map((r) => [Number(r.id), r.first_name, r.deleted])).toEqual([[id, 'Version2', false]]);
      const events = await env.query(`SELECT delivery_id, status FROM webhook_events ORDER BY delivery_id`);
      expect(events.map((r) => r.delivery_id)).toEqual(['d-del', 'd-old-create', 'd-v1', 'd-v2']);
      expect(new Set(events.map((r) => r.status))).toEqual(new Set(['applied']));
      const marks = await env.query(`SELECT contact_id, last_delivery_id, deleted_event_at IS NOT NULL AS deleted FROM _webhook_contact_events ORDER BY contact_id`);
      expect(marks.map((r) => [Number(r.contact_id), r.last_delivery_id, r.deleted])).toEqual([
        [id, 'd-v2', false],
        [gone.id, 'd-del', true],
      ]);
    });
  });

  it('re-applies a batch whose offset commit was lost without duplicating anything (exactly-once effect)', async () => {
    // The clock decides when the activity publishes: the test moves it past the interval.
    let clock = Date.parse('2026-11-20T10:00:00Z');
    await withEnv(
      async (env) => {
        const ids = env.sim
          .truth()
          .contacts.slice(0, 3)
          .map((c) => c.id);
        await env.serve(async (s) => {
          for (const [i, id] of ids.entries()) {
            const c = env.sim.mutate.updateContact(id, { first_name: `Batch${i}` });
            expect(await env.post(s, contactEvent('contact.updated', c, new Date().toISOString(), `u-${i}`))).toBe(202);
            env.sim.mutate.emailEvent('email.opened', id);
            expect(
              await env.post(s, makeDelivery({ secret: SECRET, event: 'email.opened', deliveryId: `e-${i}`, data: { email: { id: i + 1, subject: 'S', contact_id: id, campaign_id: null } } })),
            ).toBe(202);
          }
          const acts = env.activities();
          clock += 60_000;
          expect((await env.applyUntil(acts, committed(s))).at(-1)).toMatchObject({ appliedSeq: 6 });
        });
        const snapshot = async () => ({
          events: await env.query(`SELECT delivery_id FROM webhook_events ORDER BY 1`),
          email: await env.query(`SELECT delivery_id FROM email_events ORDER BY 1`),
          contacts: await env.query(`SELECT id, first_name, _load_id FROM contacts ORDER BY id`),
          history: await env.query(`SELECT count(*)::INT AS n FROM contacts_history`),
        });
        const first = await snapshot();
        expect(first.events).toHaveLength(6);
        // Once the publish interval had passed, the activity published what it applied to the lake.
        expect(existsSync(join(env.dir, 'lake', 'webhook_events'))).toBe(true);
        expect(existsSync(join(env.dir, 'lake', 'contacts'))).toBe(true);
        expect(first.email).toHaveLength(3);
        // A crash after the contact loads but before the offset commit: the offset is behind.
        await env.query(`UPDATE _webhook_applier SET applied_seq = 0`);
        // A restarted worker (new activities) applies the range again.
        expect((await env.applyUntil(env.activities(), 6)).at(-1)).toMatchObject({ appliedSeq: 6 });
        const second = await snapshot();
        expect(second.events).toEqual(first.events);
        expect(second.email).toEqual(first.email);
        expect(second.contacts.map((r) => [r.id, r.first_name])).toEqual(first.contacts.map((r) => [r.id, r.first_name]));
        expect(second.history).toEqual(first.history);
      },
      { publishEveryMs: 30_000, now: () => clock },
    );
  });

  it('publishes the last batch before a quiet spell once the interval has passed, with no later batch', async () => {
    let clock = Date.parse('2026-11-20T10:00:00Z');
    await withEnv(
      async (env) => {
        const acts = env.activities();
        await env.serve(async (s) => {
          const d = makeDelivery({ secret: SECRET, event: 'email.opened', deliveryId: 'quiet-1', data: { email: { id: 1, subject: 'S', contact_id: 1, campaign_id: null } } });
          expect(await env.post(s, d)).toBe(202);
          await env.applyUntil(acts, committed(s));
        });
        // Applied within the interval: not published yet.
        expect(existsSync(join(env.dir, 'lake', 'webhook_events'))).toBe(false);
        await acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 });
        expect(existsSync(join(env.dir, 'lake', 'webhook_events'))).toBe(false);
        // No delivery comes; the workflow's next (idle) call after the interval publishes it.
        clock += 31_000;
        await acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 });
        expect(existsSync(join(env.dir, 'lake', 'webhook_events'))).toBe(true);
      },
      { publishEveryMs: 30_000, now: () => clock },
    );
  });

  it('retries a failed publish of the last batch at the next idle call after the interval', async () => {
    let clock = Date.parse('2026-11-20T10:00:00Z');
    await withEnv(
      async (env) => {
        const acts = env.activities();
        const table = join(env.dir, 'lake', 'webhook_events');
        // A directory where the publish swaps its symlink in: the publish fails (rename over a directory).
        mkdirSync(join(table, 'in-the-way'), { recursive: true });
        await env.serve(async (s) => {
          const d = makeDelivery({ secret: SECRET, event: 'email.opened', deliveryId: 'quiet-2', data: { email: { id: 2, subject: 'S', contact_id: 1, campaign_id: null } } });
          expect(await env.post(s, d)).toBe(202);
          await env.applyUntil(acts, committed(s));
        });
        clock += 31_000;
        await acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 });
        expect(lstatSync(table).isSymbolicLink()).toBe(false);
        rmSync(table, { recursive: true });
        // Not due again yet; then due, with nothing new applied: the failed publish is tried again.
        await acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 });
        expect(existsSync(table)).toBe(false);
        clock += 31_000;
        await acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 });
        expect(lstatSync(table).isSymbolicLink()).toBe(true);
      },
      { publishEveryMs: 30_000, now: () => clock },
    );
  });

  it('refetches a contact again after an event stamped in the future, so later changes are not hidden', async () => {
    await withEnv(async (env) => {
      const id = env.sim.truth().contacts[3]!.id;
      const acts = env.activities();
      await env.serve(async (s) => {
        const a = env.sim.mutate.updateContact(id, { first_name: 'First' });
        // Clock skew on the CRM side: four minutes ahead (the receiver admits up to five; further
        // ahead is refused, see poison-fuzz.test.ts).
        expect(await env.post(s, contactEvent('contact.updated', a, new Date(Date.now() + 4 * 60e3).toISOString(), 'future'))).toBe(202);
        await env.applyUntil(acts, committed(s));
        const b = env.sim.mutate.updateContact(id, { first_name: 'Second' });
        expect(await env.post(s, contactEvent('contact.updated', b, new Date().toISOString(), 'now'))).toBe(202);
        const second = await env.applyUntil(acts, committed(s));
        expect(second.reduce((n, r) => n + r.refetches, 0)).toBe(1);
      });
      expect(await env.query(`SELECT first_name FROM contacts WHERE id = $1`, [id])).toEqual([{ first_name: 'Second' }]);
    });
  });

  it('does not mark events failed when the CRM refuses the credentials: it fails for Temporal to retry', async () => {
    await withEnv(async (env) => {
      const wrong = createCrmClient({ baseUrl: env.sim.baseUrl, username: env.sim.credentials.username, password: 'not-the-password', retry: { maxRetries: 0 } });
      try {
        const c = env.sim.truth().contacts[4]!;
        await env.serve(async (s) => {
          expect(await env.post(s, contactEvent('contact.updated', c, new Date().toISOString(), 'auth-1'))).toBe(202);
          const acts = env.activities({ refetcher: createClientRefetcher(wrong) });
          // Retryable: Temporal's retry policy tries the same range again, nothing is set aside.
          for (let attempt = 0; attempt < 2; attempt++) {
            await expect(acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 })).rejects.toMatchObject({
              type: 'WEBHOOK_APPLY_FAILED',
              nonRetryable: false,
              message: expect.stringMatching(/CRM_UNAUTHORIZED/),
            });
          }
        });
        expect(await env.query(`SELECT count(*)::INT AS n FROM webhook_events`)).toEqual([{ n: 0 }]);
        expect(await env.query(`SELECT count(*)::INT AS n FROM webhook_dead_letters`)).toEqual([{ n: 0 }]);
        // With working credentials the same delivery is applied.
        expect((await env.applyUntil(env.activities(), 1)).at(-1)).toMatchObject({ appliedSeq: 1, events: 1, deadLettered: 0 });
        expect(await env.query(`SELECT delivery_id, status FROM webhook_events`)).toEqual([{ delivery_id: 'auth-1', status: 'applied' }]);
      } finally {
        await wrong.close();
      }
    });
  });

  it('tombstones a contact whose refetch finds it gone, even when its delete event never arrived', async () => {
    await withEnv(async (env) => {
      const c = env.sim.truth().contacts[6]!;
      const acts = env.activities();
      await env.serve(async (s) => {
        expect(await env.post(s, contactEvent('contact.updated', c, new Date().toISOString(), 'before-delete'))).toBe(202);
        await env.applyUntil(acts, committed(s));
        env.sim.mutate.deleteContact(c.id);
        expect(await env.post(s, contactEvent('contact.status_changed', c, new Date().toISOString(), 'after-delete'))).toBe(202);
        await env.applyUntil(acts, committed(s));
      });
      const rows = await env.query(`SELECT _deleted_at IS NOT NULL AS deleted FROM contacts WHERE id = $1`, [c.id]);
      expect(rows).toEqual([{ deleted: true }]);
    });
  });

  it('records a spooled delivery it cannot read as failed and carries on', async () => {
    await withEnv(async (env) => {
      await env.serve(async (s) => {
        // Only corruption can put this in the spool (the receiver checks bodies); it must not stall applying.
        await s.spool.append({ deliveryId: 'garbled', webhookId: 1, event: 'contact.updated', known: true, receivedAt: Date.now(), body: Buffer.from('{"event":') });
        expect(await env.post(s, makeDelivery({ secret: SECRET, event: 'email.sent', deliveryId: 'fine', data: { email: { id: 1, contact_id: 1 } } }))).toBe(202);
        await env.applyUntil(env.activities(), committed(s));
      });
      expect(await env.query(`SELECT delivery_id, status, error, payload FROM webhook_events ORDER BY 1`)).toEqual([
        { delivery_id: 'fine', status: 'applied', error: null, payload: expect.stringContaining('email.sent') },
        { delivery_id: 'garbled', status: 'failed', error: 'body is not JSON', payload: null },
      ]);
    });
  });

  it('keeps acknowledging while a sync load holds the owner, and applies once it lets go', async () => {
    await withEnv(async (env) => {
      const id = env.sim.truth().contacts[5]!.id;
      await env.serve(async (s) => {
        // A sync load: a job on the owner that ends when the test says.
        let release!: () => void;
        let started!: () => void;
        const running = new Promise<void>((r) => (started = r));
        const load = env.owner.run(() => {
          started();
          return new Promise<void>((r) => (release = r));
        });
        try {
          await running;
          const c = env.sim.mutate.updateContact(id, { first_name: 'WhileLoading' });
          // The receiver never touches the warehouse: it acknowledges at once.
          expect(await env.post(s, contactEvent('contact.updated', c, new Date().toISOString(), 'held-1'))).toBe(202);
          let applied = false;
          const apply = env.applyUntil(env.activities(), committed(s)).then((r) => {
            applied = true;
            return r;
          });
          // Its first job (reading the applied offset) queues behind the load (bounded wait for the queue, not a timing claim).
          for (let i = 0; i < 500 && env.owner.pending < 2; i++) await new Promise((r) => setTimeout(r, 10));
          expect(env.owner.pending).toBe(2);
          // The receiver keeps answering meanwhile, and nothing is applied.
          expect(await env.post(s, makeDelivery({ secret: SECRET, event: 'email.sent', deliveryId: 'held-2', data: { email: { id: 2, contact_id: id } } }))).toBe(202);
          expect(applied).toBe(false);
          release();
          await load;
          expect((await apply).at(-1)!.appliedSeq).toBeGreaterThanOrEqual(1);
          await env.applyUntil(env.activities(), committed(s));
        } finally {
          release();
          await load;
        }
      });
      expect(await env.query(`SELECT first_name FROM contacts WHERE id = $1`, [id])).toEqual([{ first_name: 'WhileLoading' }]);
      expect(await env.query(`SELECT delivery_id FROM webhook_events ORDER BY 1`)).toEqual([{ delivery_id: 'held-1' }, { delivery_id: 'held-2' }]);
    });
  });

  it('stores unknown events flagged, and fails the range for a retry while the CRM fails, then catches up', async () => {
    await withEnv(async (env) => {
      const id = env.sim.truth().contacts[2]!.id;
      const acts = env.activities();
      await env.serve(async (s) => {
        env.sim.setFaults({ errorRate: 1 });
        const c = env.sim.mutate.updateContact(id, { first_name: 'AfterOutage' });
        expect(await env.post(s, contactEvent('contact.updated', c, new Date().toISOString(), 'during-outage'))).toBe(202);
        expect(await env.post(s, makeDelivery({ secret: SECRET, event: 'contact.merged', deliveryId: 'unknown-1', data: { from: 1, into: 2 } }))).toBe(202);
        for (let attempt = 0; attempt < 2; attempt++) {
          await expect(acts.applyWebhookSpool({ batchSize: 100, waitMs: 0 })).rejects.toMatchObject({ type: 'WEBHOOK_APPLY_FAILED', nonRetryable: false });
        }
        expect(await env.query(`SELECT applied_seq FROM _webhook_applier`)).toEqual([]);
        env.sim.setFaults({});
        expect((await env.applyUntil(acts, committed(s))).at(-1)).toMatchObject({ appliedSeq: 2, deadLettered: 0 });
      });
      const rows = await env.query(`SELECT first_name FROM contacts WHERE id = $1`, [id]);
      expect(rows).toEqual([{ first_name: 'AfterOutage' }]);
      const events = await env.query(`SELECT delivery_id, status, known_event, payload->>'$.data.into' AS into FROM webhook_events ORDER BY 1`);
      expect(events).toEqual([
        { delivery_id: 'during-outage', status: 'applied', known_event: true, into: null },
        { delivery_id: 'unknown-1', status: 'unknown_event', known_event: false, into: '2' },
      ]);
    });
  });
});
