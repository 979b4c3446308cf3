import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCrmClient } from '../../src/crm/index.js';
import { Secret } from '../../src/secret.js';
import { startSimulator } from '../../src/simulator/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { isKnownEvent } from '../../src/webhooks/event-names.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import type { WebhookWarehouse } from '../../src/webhooks/webhook-applier.js';
import { withWebhookService, type WebhookService } from '../../src/webhooks/webhook-service.js';
import { runCli } from '../cli/run-cli.js';
import { withTempDir } from './helpers.js';

const SECRET = 'dead-letter-secret-0123456789';

const body = (event: string, data: string, timestamp = new Date().toISOString()): Buffer => Buffer.from(`{"event":"${event}","timestamp":"${timestamp}","webhook_id":1,"data":${data}}`);

/** Stores a body as an earlier receiver (without today's checks) would have: straight into the spool. */
const spooled = (s: WebhookService, deliveryId: string, event: string, b: Buffer) => s.spool.append({ deliveryId, webhookId: 1, event, known: isKnownEvent(event), receivedAt: Date.now(), body: b });

describe('webhook dead letters', () => {
  it('sets aside what cannot be applied, moves on within 5 s each time, and lists and retries them from the CLI', async () => {
    await withTempDir(async (dir) => {
      const sim = await startSimulator({ seed: 23, contacts: 10 });
      const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, retry: { maxRetries: 0 } });
      const wh = { dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') };
      const [ok, poison] = sim.truth().contacts.map((c) => c.id);
      // A fault in the warehouse load for one contact only (a stand-in for a value the load cannot
      // take): the batch holding it fails with an error waiting will not fix.
      const faulty = <T>(fn: (w: WebhookWarehouse) => Promise<T>): Promise<T> =>
        withWarehouse({ ...wh, write: true }, (w) =>
          fn(
            new Proxy(w, {
              get(target, key) {
                const v = Reflect.get(target, key) as unknown;
                if (key !== 'loadContacts') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
                return (rows: { id: number }[], ctx: never) =>
                  rows.some((r) => r.id === poison) ? Promise.reject(new Error('this contact cannot be loaded')) : target.loadContacts(rows as never, ctx);
              },
            }),
          ),
        );
      const valid = (k: number) => body('email.opened', `{"email":{"id":${k},"subject":"S","contact_id":${ok}}}`);
      try {
        await withWebhookService(
          {
            spoolDir: join(dir, 'spool'),
            host: '127.0.0.1',
            port: 0,
            secrets: createSecretResolver({ secret: new Secret(SECRET) }),
            apply: { refetcher: createClientRefetcher(client), withWarehouse: faulty, lingerMs: 5, publishEveryMs: 0 },
          },
          async (s) => {
            const poisons: [string, string, Buffer][] = [
              ['deep', 'email.opened', body('email.opened', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`)],
              ['surrogate', 'email.opened', body('email.opened', `{"email":{"id":2,"subject":"\\ud800","contact_id":${ok}}}`)],
              ['bom', 'email.clicked', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body('email.clicked', `{"email":{"id":3,"contact_id":${ok}}}`)])],
              ['unloadable', 'contact.updated', body('contact.updated', `{"contact":{"id":${poison}}}`)],
            ];
            for (const [k, [id, event, b]] of poisons.entries()) {
              // The poison and a valid delivery on each side, stored in one group commit: one batch.
              expect(await Promise.all([spooled(s, `before-${id}`, 'email.opened', valid(100 + k)), spooled(s, id, event, b), spooled(s, `after-${id}`, 'email.opened', valid(200 + k))])).toEqual([
                'accepted',
                'accepted',
                'accepted',
              ]);
              const target = s.spool.stats().committedSeq;
              expect(await s.applier!.waitApplied(target, 5_000), `after ${id}: ${s.applier!.status().lastError}`).toBe(true);
            }
            expect(s.applier!.status().deadLettered).toBe(3);
          },
        );
        const q = (sql: string) => withWarehouse({ ...wh, write: true }, (w) => w.query(sql));
        const events = await q(`SELECT delivery_id, status FROM webhook_events ORDER BY spool_seq`);
        expect(events.map((r) => [r.delivery_id, r.status])).toEqual(
          ['deep', 'surrogate', 'bom', 'unloadable'].flatMap((id) => [
            [`before-${id}`, 'applied'],
            [id, id === 'bom' ? 'applied' : 'failed'],
            [`after-${id}`, 'applied'],
          ]),
        );
        const dead = await q(`SELECT delivery_id, reason, error, attempts FROM webhook_dead_letters ORDER BY spool_seq`);
        expect(dead).toEqual([
          { delivery_id: 'deep', reason: 'unreadable', error: expect.stringMatching(/^json_too_deep/), attempts: 1 },
          { delivery_id: 'surrogate', reason: 'unreadable', error: expect.stringMatching(/^invalid_utf8/), attempts: 1 },
          { delivery_id: 'unloadable', reason: 'apply_error', error: 'Error: this contact cannot be loaded', attempts: 1 },
        ]);

        // The CLI, as a user runs it, against the same warehouse and CRM.
        const env = {
          CRM_BASE_URL: sim.baseUrl,
          CRM_USERNAME: sim.credentials.username,
          CRM_PASSWORD: sim.credentials.password,
          CRMSYNC_DB: wh.dbPath,
          CRMSYNC_LAKE: wh.lakePath,
          CRMSYNC_DATA_DIR: dir,
          CRMSYNC_LOG_LEVEL: 'silent',
        };
        const list = await runCli(['webhooks', 'dead-letters'], env);
        expect(list.code, list.stderr).toBe(0);
        expect(list.stdout).toMatch(/3 webhook dead letters/);
        for (const id of ['deep', 'surrogate', 'unloadable']) expect(list.stdout).toContain(`  ${id}  `);

        // Retried without the fault: the unloadable one applies now; the unreadable ones fail again.
        const retry = await runCli(['webhooks', 'dead-letters', '--retry'], env);
        expect(retry.code, retry.stderr).toBe(1);
        expect(retry.stdout).toMatch(/Retried 3 dead letters: 1 applied, 2 failed again, 0 deferred/);
        expect(await q(`SELECT delivery_id, attempts FROM webhook_dead_letters WHERE resolved_at IS NULL ORDER BY spool_seq`)).toEqual([
          { delivery_id: 'deep', attempts: 2 },
          { delivery_id: 'surrogate', attempts: 2 },
        ]);
        expect(await q(`SELECT status FROM webhook_events WHERE delivery_id = 'unloadable'`)).toEqual([{ status: 'applied' }]);
        const json = await runCli(['webhooks', 'dead-letters', '--json'], env);
        expect(
          json.stdout
            .trim()
            .split('\n')
            .map((l) => (JSON.parse(l) as { delivery_id: string }).delivery_id),
        ).toEqual(['deep', 'surrogate']);
      } finally {
        await client.close();
        await sim.close();
      }
    });
  });
});
