import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { startWebhookApply } from '../../src/cli/webhooks.js';
import { loadConfig } from '../../src/config.js';
import { crmClientFromConfig } from '../../src/crm/index.js';
import { silentLogger } from '../../src/logger.js';
import { Secret } from '../../src/secret.js';
import { startSimulator } from '../../src/simulator/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withWebhookService } from '../../src/webhooks/webhook-service.js';
import { webhookSpoolDir } from '../../src/webhooks/webhook-spool-dir.js';
import { openOwnerFromConfig } from '../../src/worker/open-owner-from-config.js';
import type { WebhookApplyTotals } from '../../workflows/webhook-apply-types.js';
import { withTestWorker } from '../helpers/temporal.js';
import { testEnv } from '../helpers/test-env.js';
import { makeDelivery } from './helpers.js';

const SECRET = 'apply-workflow-secret-0123456789';

describe('webhook applies and every other write through the warehouse owner', () => {
  it('applies a spooled delivery through the warehouse owner, with only seqs and counts in history', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ seed: 5, contacts: 10 });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-apply-wf-'));
    const taskQueue = `apply-${randomUUID().slice(0, 8)}`;
    const config = loadConfig(testEnv(sim, dir, { CRMSYNC_TASK_QUEUE: taskQueue }));
    const owner = await openOwnerFromConfig(config);
    const crm = crmClientFromConfig(config);
    try {
      const contact = sim.mutate.updateContact(sim.truth().contacts[0]!.id, { first_name: 'Hooked' });
      // The receiver only verifies and spools; the worker's activity reads the spool and applies.
      await withWebhookService({ spoolDir: webhookSpoolDir(config), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async (service) => {
        const delivery = makeDelivery({
          secret: SECRET,
          deliveryId: 'wf-1',
          data: { contact: { id: contact.id, email: contact.email, first_name: contact.first_name, last_name: null, status: contact.status, created_at: '2026-01-01 00:00:00' } },
        });
        const res = await request(service.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
        await res.body.dump();
        expect(res.statusCode).toBe(202);

        await withTestWorker({ taskQueue, warehouseActivities: createActivities({ config, logger: silentLogger, crm, owner }).warehouse }, async ({ client }) => {
          const handle = await startWebhookApply(client, taskQueue);
          // A second receiver joins the same workflow instead of starting another.
          expect((await startWebhookApply(client, taskQueue)).workflowId).toBe(handle.workflowId);
          let status: WebhookApplyTotals | undefined;
          for (let i = 0; i < 600 && (status?.appliedSeq ?? 0) < 1; i++) {
            status = await handle.query<WebhookApplyTotals>('webhookApplyStatus');
            await new Promise((r) => setTimeout(r, 100));
          }
          expect(status).toMatchObject({ appliedSeq: 1, events: 1, deadLettered: 0 });
          const rows = await owner.run((w) => w.query(`SELECT first_name FROM contacts WHERE id = ?`, [contact.id]));
          expect(rows).toEqual([{ first_name: 'Hooked' }]);
          const events = await owner.run((w) => w.query(`SELECT delivery_id, status FROM webhook_events`));
          expect(events).toEqual([{ delivery_id: 'wf-1', status: 'applied' }]);
          // Rows never enter history: neither the delivery's body nor the refetched contact.
          const history = JSON.stringify(await handle.fetchHistory());
          expect(history).not.toContain('Hooked');
          expect(history).not.toContain(contact.email);
          await handle.terminate('test done');
        });
      });
    } finally {
      await crm.close();
      await owner.close();
      await sim.close();
    }
    try {
      const rows = await withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: true }, (w) => w.query(`SELECT count(*) AS n FROM webhook_events`));
      expect(Number(rows[0]?.n)).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs a sync load, a push plan and ledger, and a webhook apply at once through one owner', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ seed: 6, contacts: 10 });
    const dir = await mkdtemp(join(tmpdir(), 'crmsync-one-owner-'));
    const config = loadConfig(testEnv(sim, dir));
    const owner = await openOwnerFromConfig(config);
    const crm = crmClientFromConfig(config);
    try {
      const activities = createActivities({ config, logger: silentLogger, crm, owner }).warehouse;
      await owner.run((w) => w.query(`CREATE TABLE promo AS SELECT * FROM (VALUES ('one-owner@example.test', 'subscribed')) t(email, status)`));
      const contact = sim.mutate.updateContact(sim.truth().contacts[0]!.id, { first_name: 'Together' });
      await withWebhookService({ spoolDir: webhookSpoolDir(config), host: '127.0.0.1', port: 0, secrets: createSecretResolver({ secret: new Secret(SECRET) }) }, async (service) => {
        const delivery = makeDelivery({
          secret: SECRET,
          data: { contact: { id: contact.id, email: contact.email, first_name: contact.first_name, last_name: null, status: contact.status, created_at: '2026-01-01 00:00:00' } },
        });
        const res = await request(service.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
        await res.body.dump();
        expect(res.statusCode).toBe(202);
        // Three writers that each opened the file for themselves before: now jobs on one owner.
        const push = (async () => {
          const plan = await activities.planPush({ from: 'promo', runId: 'one-owner', createMissing: false });
          return await activities.pushBatch({ runId: plan.runId, source: plan.source, fromSeq: 0, toSeq: plan.toSend, maxMs: 60_000 });
        })();
        const [tags, pushed, applied] = await Promise.all([
          activities.syncEntityStream({ stream: 'tags', loadId: 'L-one-owner' }),
          push,
          activities.applyWebhookSpool({ batchSize: 100, waitMs: 5_000 }),
        ]);
        expect(tags).toMatchObject({ rows: sim.truth().tags.length });
        expect(pushed).toMatchObject({ sent: 1, succeeded: 1, failed: 0 });
        expect(applied).toMatchObject({ appliedSeq: 1, events: 1, deadLettered: 0 });
      });
      const counts = await owner.run((w) =>
        w.query(
          `SELECT (SELECT count(*) FROM tags)::INT AS tags, (SELECT count(*) FROM _push_ledger WHERE outcome = 'succeeded')::INT AS pushed, (SELECT first_name FROM contacts WHERE id = ?) AS hooked`,
          [contact.id],
        ),
      );
      expect(counts).toEqual([{ tags: sim.truth().tags.length, pushed: 1, hooked: 'Together' }]);
    } finally {
      await crm.close();
      await owner.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
