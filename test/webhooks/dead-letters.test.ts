import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCrmClient } from '../../src/crm/index.js';
import { Secret } from '../../src/secret.js';
import { startSimulator } from '../../src/simulator/index.js';
import { withWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { isKnownEvent } from '../../src/webhooks/event-names.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withWebhookService, type WebhookService } from '../../src/webhooks/webhook-service.js';
import { runCli } from '../cli/run-cli.js';
import { withTempDir } from './helpers.js';
import { withOwnerApply } from './owner-apply.js';

const SECRET = 'dead-letter-secret-0123456789';

const body = (event: string, data: string, timestamp = new Date().toISOString()): Buffer => Buffer.from(`{"event":"${event}","timestamp":"${timestamp}","webhook_id":1,"data":${data}}`);

/** Stores a body as an earlier receiver (without today's checks) would have: straight into the spool. */
const spooled = (s: WebhookService, deliveryId: string, event: string, b: Buffer) => s.spool.append({ deliveryId, webhookId: 1, event, known: isKnownEvent(event), receivedAt: Date.now(), body: b });

describe('webhook dead letters', () => {
  it('sets aside what cannot be applied and moves on each time; the CLI lists them while a worker holds the file, and retries them', { timeout: 180_000 }, async () => {
    await withTempDir(async (dir) => {
      const sim = await startSimulator({ seed: 23, contacts: 10 });
      const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, retry: { maxRetries: 0 } });
      const wh = { dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') };
      const [ok, poison] = sim.truth().contacts.map((c) => c.id);
      // A fault in the warehouse load for one contact only (a stand-in for a value the load cannot
      // take): the batch holding it fails with an error waiting will not fix.
      const faulty = (w: WarehouseHandle): WarehouseHandle =>
        new Proxy(w, {
          get(target, key) {
            const v = Reflect.get(target, key) as unknown;
            if (key !== 'loadContacts') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
            return (rows: { id: number }[], ctx: never) => (rows.some((r) => r.id === poison) ? Promise.reject(new Error('this contact cannot be loaded')) : target.loadContacts(rows as never, ctx));
          },
        });
      const valid = (k: number) => body('email.opened', `{"email":{"id":${k},"subject":"S","contact_id":${ok}}}`);
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
      // The activity publishes once this clock passes its interval.
      let clock = Date.parse('2026-11-20T10:00:00Z');
      try {
        await withOwnerApply({ dir, refetcher: createClientRefetcher(client), wrap: faulty, publishEveryMs: 60_000, now: () => clock }, async (a) => {
          const acts = a.activities();
          await withWebhookService({ spoolDir: a.spoolDir, host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async (s) => {
            const poisons: [string, string, Buffer][] = [
              ['deep', 'email.opened', body('email.opened', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`)],
              ['surrogate', 'email.opened', body('email.opened', `{"email":{"id":2,"subject":"\\ud800","contact_id":${ok}}}`)],
              ['bom', 'email.clicked', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body('email.clicked', `{"email":{"id":3,"contact_id":${ok}}}`)])],
              ['unloadable', 'contact.updated', body('contact.updated', `{"contact":{"id":${poison}}}`)],
            ];
            let deadLettered = 0;
            for (const [k, [id, event, b]] of poisons.entries()) {
              // The poison and a valid delivery on each side, stored in one group commit: one range.
              expect(await Promise.all([spooled(s, `before-${id}`, 'email.opened', valid(100 + k)), spooled(s, id, event, b), spooled(s, `after-${id}`, 'email.opened', valid(200 + k))])).toEqual([
                'accepted',
                'accepted',
                'accepted',
              ]);
              if (k === poisons.length - 1) clock += 60_000;
              // One activity call gets past it: the poison is set aside, not retried.
              const [r] = await a.applyUntil(acts, s.spool.stats().committedSeq, { rounds: 1 });
              deadLettered += r!.deadLettered;
            }
            expect(deadLettered).toBe(3);
          });
          const events = await a.query(`SELECT delivery_id, status FROM webhook_events ORDER BY spool_seq`);
          expect(events.map((r) => [r.delivery_id, r.status])).toEqual(
            ['deep', 'surrogate', 'bom', 'unloadable'].flatMap((id) => [
              [`before-${id}`, 'applied'],
              [id, id === 'bom' ? 'applied' : 'failed'],
              [`after-${id}`, 'applied'],
            ]),
          );
          const dead = await a.query(`SELECT delivery_id, reason, error, attempts FROM webhook_dead_letters ORDER BY spool_seq`);
          expect(dead).toEqual([
            { delivery_id: 'deep', reason: 'unreadable', error: expect.stringMatching(/^json_too_deep/), attempts: 1 },
            { delivery_id: 'surrogate', reason: 'unreadable', error: expect.stringMatching(/^invalid_utf8/), attempts: 1 },
            { delivery_id: 'unloadable', reason: 'apply_error', error: 'Error: this contact cannot be loaded', attempts: 1 },
          ]);

          // Listing reads the published lake, so it works while the worker's owner holds the file.
          const list = await runCli(['webhooks', 'dead-letters'], env);
          expect(list.code, list.stderr).toBe(0);
          expect(list.stdout).toMatch(/3 webhook dead letters/);
          for (const id of ['deep', 'surrogate', 'unloadable']) expect(list.stdout).toContain(`  ${id}  `);
        });

        // Retried without the fault: the unloadable one applies now; the unreadable ones fail again.
        const retry = await runCli(['webhooks', 'dead-letters', '--retry'], env);
        expect(retry.code, retry.stderr).toBe(1);
        // Exit code 1 is also what an error gives: the stderr says which it was.
        expect(retry.stdout, retry.stderr).toMatch(/Retried 3 dead letters: 1 applied, 2 failed again, 0 deferred/);
        const q = (sql: string) => withWarehouse({ ...wh, write: true }, (w) => w.query(sql));
        expect(await q(`SELECT delivery_id, attempts FROM webhook_dead_letters WHERE resolved_at IS NULL ORDER BY spool_seq`)).toEqual([
          { delivery_id: 'deep', attempts: 2 },
          { delivery_id: 'surrogate', attempts: 2 },
        ]);
        expect(await q(`SELECT status FROM webhook_events WHERE delivery_id = 'unloadable'`)).toEqual([{ status: 'applied' }]);
        // The retry published what it changed: the listing shows what is left.
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
