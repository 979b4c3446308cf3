import { describe, expect, it } from 'vitest';
import { createCrmClient, createRateLimiter } from '../../src/crm/index.js';
import { ServerError } from '../../src/crm/errors.js';
import { planPush } from '../../src/push/plan-push.js';
import { pushCrmFromClient } from '../../src/push/push-crm-from-client.js';
import { PushLedger } from '../../src/warehouse/push-ledger-store.js';
import { PushPlanStore } from '../../src/warehouse/push-plan-store.js';
import { PushBatchInterruptedError, sendBatch } from '../../src/push/send-batch.js';
import type { WarehouseQuery } from '../../src/warehouse/types.js';
import { withPushDb } from './helpers/push-db.js';
import { upsertRequests, withSimClient } from './helpers/sim-client.js';

const SOURCE = `CREATE TABLE upserts AS SELECT * FROM (VALUES
  ('push1@example.test', 'subscribed', 'Ada', 'Berlin', DATE '1990-01-31', '{"favorite_color":"Blue"}', ['VIP', 'newsletter-reader'], ['Customers'], 'Red'),
  ('push2@example.test', 'pending', 'Grace', NULL, NULL, NULL, [], [], NULL),
  ('push3@example.test', 'unsubscribed', 'Alan', 'Porto', NULL, '{"interests":["Sales","Support"]}', ['Trial User'], [], 'Green'),
  ('PUSH4@Example.test', 'bounced', NULL, NULL, NULL, NULL, [], ['Prospects', 'Events'], NULL),
  ('push5@example.test', 'complained', 'Ken', NULL, NULL, NULL, [], [], NULL),
  ('not-an-email', 'subscribed', NULL, NULL, NULL, NULL, [], [], NULL),
  ('bad-status@example.test', 'subscirbed', NULL, NULL, NULL, NULL, [], [], NULL),
  ('bad-slug@example.test', 'subscribed', NULL, NULL, NULL, '{"shoe_size":"42"}', [], [], NULL),
  ('bad-option@example.test', 'subscribed', NULL, NULL, NULL, NULL, [], [], 'Purple'),
  ('bad-tag@example.test', 'subscribed', NULL, NULL, NULL, NULL, ['No Such Tag'], [], NULL)
) AS t(email, status, first_name, city, date_of_birth, custom_values, tags, lists, cf_preferred_color)`;

// cf_preferred_color is not a field: the simulator defines favorite_color; rename it there.
const SOURCE_SQL = SOURCE.replace('cf_preferred_color', 'cf_favorite_color');

async function pushAll(db: WarehouseQuery, crm: ReturnType<typeof pushCrmFromClient>, runId: string, opts: { createMissing?: boolean; beforeSend?: () => void } = {}) {
  const plan = await planPush({ crm, db }, { from: 'upserts', runId, createMissing: opts.createMissing ?? false, dryRun: false });
  opts.beforeSend?.();
  const rows = await new PushPlanStore(db).load(runId, 0, plan.toSend);
  const sent = await sendBatch({ crm, ledger: new PushLedger(db) }, { source: plan.source, runId, rows, concurrency: 4 });
  return { plan, sent };
}

describe('push plan and send against the simulator', () => {
  it('validates locally, sends only new and changed rows, records every outcome', async () => {
    await withSimClient({ contacts: 20, seed: 7 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(SOURCE_SQL);

        const dry = await planPush({ crm, db }, { from: 'upserts', runId: 'dry', createMissing: false, dryRun: true });
        expect(dry.counts).toEqual({ new: 5, changed: 0, retry: 0, unchanged: 0, invalid: 5 });
        expect(upsertRequests(sim)).toBe(0);
        expect(await db.query('SELECT * FROM _push_ledger')).toEqual([]);

        const first = await pushAll(db, crm, 'run-1');
        expect(first.sent).toMatchObject({ sent: 5, succeeded: 5, failed: 0, skipped: 0 });
        expect(upsertRequests(sim)).toBe(5);

        const truth = new Map(sim.truth().contacts.map((c) => [c.email.toLowerCase(), c]));
        const tagId = new Map(sim.truth().tags.map((t) => [String(t.title), Number(t.id)]));
        const listId = new Map(sim.truth().lists.map((t) => [String(t.title), Number(t.id)]));
        expect(truth.get('push1@example.test')).toMatchObject({
          status: 'subscribed',
          first_name: 'Ada',
          city: 'Berlin',
          date_of_birth: '1990-01-31',
          custom_values: { favorite_color: 'Red' },
          tags: [tagId.get('VIP'), tagId.get('Newsletter Reader')].sort((a, b) => a! - b!),
          lists: [listId.get('Customers')],
        });
        expect(truth.get('push3@example.test')?.custom_values).toMatchObject({ interests: ['Sales', 'Support'], favorite_color: 'Green' });
        expect(truth.get('push4@example.test')).toMatchObject({ status: 'bounced', lists: [listId.get('Prospects'), listId.get('Events')].sort((a, b) => a! - b!) });
        for (const bad of ['not-an-email', 'bad-status@example.test', 'bad-slug@example.test', 'bad-option@example.test', 'bad-tag@example.test']) {
          expect(truth.has(bad)).toBe(false);
        }

        const dead = await db.query('SELECT push_key, error_field, error_message FROM push_dead_letters ORDER BY push_key');
        expect(dead.map((r) => [r.push_key, r.error_field])).toEqual([
          ['bad-option@example.test', 'custom_values.favorite_color'],
          ['bad-slug@example.test', 'custom_values.shoe_size'],
          ['bad-status@example.test', 'status'],
          ['bad-tag@example.test', 'tags'],
          ['not-an-email', 'email'],
        ]);
        expect(String(dead[2]?.error_message)).toMatch(/^status: "subscirbed" is not a contact status/);
        expect(String(dead[3]?.error_message)).toContain('--create-missing-tags');

        // Unchanged source: nothing new to send; only the still-invalid rows are checked again.
        const second = await pushAll(db, crm, 'run-2');
        expect(second.plan.counts).toEqual({ new: 0, changed: 0, retry: 0, unchanged: 5, invalid: 5 });
        expect(upsertRequests(sim)).toBe(5);

        // Fix the invalid rows away and change two valid ones: exactly two upserts.
        await db.query(`DELETE FROM upserts WHERE email NOT ILIKE 'push%'`);
        await db.query(`UPDATE upserts SET city = 'Lisbon' WHERE email IN ('push2@example.test', 'push5@example.test')`);
        const third = await pushAll(db, crm, 'run-3');
        expect(third.plan.counts).toEqual({ new: 0, changed: 2, retry: 0, unchanged: 3, invalid: 0 });
        expect(upsertRequests(sim)).toBe(7);
        expect(sim.truth().contacts.find((c) => c.email === 'push5@example.test')?.city).toBe('Lisbon');
        expect(await db.query('SELECT * FROM push_dead_letters')).toEqual([]);

        // A fully settled source costs no request at all, not even the metadata reads.
        const before = sim.stats().requests;
        const fourth = await pushAll(db, crm, 'run-4');
        expect(fourth.plan.counts.unchanged).toBe(5);
        expect(sim.stats().requests).toBe(before);
      });
    });
  });

  it('creates missing tags and lists on request', async () => {
    await withSimClient({ contacts: 5, seed: 3 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(`CREATE TABLE upserts AS SELECT 'new-tags@example.test' AS email, 'subscribed' AS status, 'Spring Promo, vip' AS tags, '["Brand New List"]' AS lists`);
        const dry = await planPush({ crm, db }, { from: 'upserts', runId: 'dry', createMissing: true, dryRun: true });
        expect(dry.createdTags).toEqual(['Spring Promo']);
        expect(dry.createdLists).toEqual(['Brand New List']);
        expect(sim.truth().tags.some((t) => t.title === 'Spring Promo')).toBe(false);

        const { sent } = await pushAll(db, crm, 'run-1', { createMissing: true });
        expect(sent.succeeded).toBe(1);
        const truth = sim.truth();
        const promo = truth.tags.find((t) => t.title === 'Spring Promo');
        const vip = truth.tags.find((t) => t.title === 'VIP');
        const list = truth.lists.find((t) => t.title === 'Brand New List');
        expect(truth.contacts.find((c) => c.email === 'new-tags@example.test')).toMatchObject({
          tags: [Number(vip?.id), Number(promo?.id)].sort((a, b) => a - b),
          lists: [Number(list?.id)],
        });
      });
    });
  });

  it('a retryable server failure is no row failure: the batch ends at its first unfinished row and the next goes on', async () => {
    await withSimClient({ contacts: 5, seed: 5 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(`CREATE TABLE upserts AS SELECT 'retry' || i || '@example.test' AS email, 'subscribed' AS status FROM range(6) t(i)`);
        const plan = await planPush({ crm, db }, { from: 'upserts', runId: 'run-1', createMissing: false, dryRun: false });
        const store = new PushPlanStore(db);
        const rows = await store.load('run-1', 0, plan.toSend);
        const ledger = new PushLedger(db);
        // The first two rows go through, then the server fails every request.
        let sent = 0;
        const flaky: typeof crm = {
          ...crm,
          upsertContact: (body) => {
            if (++sent === 3) sim.setFaults({ errorRate: 1 });
            return crm.upsertContact(body);
          },
        };
        const first = await sendBatch({ crm: flaky, ledger }, { source: plan.source, runId: 'run-1', rows, concurrency: 1 });
        // One request for the failing row, none for the rows after it; the two finished rows count.
        expect(first).toMatchObject({ sent: 2, succeeded: 2, failed: 0, nextSeq: 2, resumeAfterMs: expect.any(Number) });
        expect(upsertRequests(sim)).toBe(3);
        expect(await db.query(`SELECT push_key, outcome FROM _push_ledger ORDER BY push_key`)).toEqual([
          { push_key: 'retry0@example.test', outcome: 'succeeded' },
          { push_key: 'retry1@example.test', outcome: 'succeeded' },
        ]);

        // Still down: a batch that finishes nothing fails retryable, for Temporal's growing delays.
        const err = await sendBatch({ crm, ledger }, { source: plan.source, runId: 'run-1', rows: await store.load('run-1', 2, plan.toSend), concurrency: 1 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(PushBatchInterruptedError);
        expect((err as PushBatchInterruptedError).retryable).toBe(true);

        sim.setFaults({});
        const rest = await sendBatch({ crm, ledger }, { source: plan.source, runId: 'run-1', rows: await store.load('run-1', first.nextSeq, plan.toSend), concurrency: 1 });
        expect(rest).toMatchObject({ sent: 4, succeeded: 4, failed: 0, skipped: 0, requests: 4 });
        expect(rest.resumeAfterMs).toBeUndefined();
        expect(upsertRequests(sim)).toBe(8);
        const after = await db.query(`SELECT outcome, attempts, failures FROM _push_ledger ORDER BY push_key`);
        expect(after).toEqual(Array(6).fill({ outcome: 'succeeded', attempts: 1, failures: 0 }));
      });
    });
  });

  it('rows that finished after the interrupted one count once, in the batch that goes on from it', async () => {
    await withSimClient({ contacts: 5, seed: 7 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(`CREATE TABLE upserts AS SELECT 'mid' || i || '@example.test' AS email, 'subscribed' AS status FROM range(8) t(i)`);
        const plan = await planPush({ crm, db }, { from: 'upserts', runId: 'run-m', createMissing: false, dryRun: false });
        const store = new PushPlanStore(db);
        const ledger = new PushLedger(db);
        // Row 1 meets a 503 once; the rows in flight beside it finish.
        let failedOnce = false;
        const flaky: typeof crm = {
          ...crm,
          upsertContact: (body) => {
            if (body.email === 'mid1@example.test' && !failedOnce) {
              failedOnce = true;
              return Promise.reject(new ServerError('HTTP 503', { statusCode: 503 }));
            }
            return crm.upsertContact(body);
          },
        };
        const first = await sendBatch({ crm: flaky, ledger }, { source: plan.source, runId: 'run-m', rows: await store.load('run-m', 0, 8), concurrency: 4 });
        expect(first.nextSeq).toBe(1);
        expect(first).toMatchObject({ sent: 1, succeeded: 1 });
        const rest = await sendBatch({ crm: flaky, ledger }, { source: plan.source, runId: 'run-m', rows: await store.load('run-m', first.nextSeq, 8), concurrency: 4 });
        expect(first.succeeded + rest.succeeded).toBe(8);
        expect(first.sent + rest.sent).toBe(8);
        // Each row reached the CRM once (the 503 came from the stand-in, before the CRM).
        expect(upsertRequests(sim)).toBe(8);
        expect(await db.query(`SELECT count(*)::INT AS n FROM _push_ledger WHERE outcome = 'succeeded'`)).toEqual([{ n: 8 }]);
      });
    });
  });

  it('a row the CRM refuses is recorded as failed once, and the batch goes on', async () => {
    await withSimClient({ contacts: 5, seed: 6 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(`CREATE TABLE upserts AS SELECT 'refused' || i || '@example.test' AS email, 'subscribed' AS status FROM range(4) t(i)`);
        const plan = await planPush({ crm, db }, { from: 'upserts', runId: 'run-r', createMissing: false, dryRun: false });
        const rows = await new PushPlanStore(db).load('run-r', 0, plan.toSend);
        const ledger = new PushLedger(db);
        const refused: typeof crm = {
          ...crm,
          upsertContact: (body) => (body.email === 'refused1@example.test' ? crm.upsertContact({ ...body, email: 'not-an-email' }) : crm.upsertContact(body)),
        };
        const first = await sendBatch({ crm: refused, ledger }, { source: plan.source, runId: 'run-r', rows, concurrency: 2 });
        expect(first).toMatchObject({ sent: 4, succeeded: 3, failed: 1, requests: 4 });
        // Run again (as Temporal would after a crash): nothing is sent or recorded a second time.
        const again = await sendBatch({ crm: refused, ledger }, { source: plan.source, runId: 'run-r', rows, concurrency: 2 });
        expect(again).toMatchObject({ sent: 4, succeeded: 3, failed: 1, requests: 0 });
        expect(upsertRequests(sim)).toBe(4);
        const failed = await db.query(`SELECT push_key, outcome, retryable, attempts, failures FROM _push_ledger WHERE outcome = 'failed'`);
        expect(failed).toEqual([{ push_key: 'refused1@example.test', outcome: 'failed', retryable: false, attempts: 1, failures: 1 }]);
      });
    });
  });

  it('a batch past its deadline stops starting rows and says where the next one begins', async () => {
    await withSimClient({ contacts: 5, seed: 9 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(`CREATE TABLE upserts AS SELECT 'deadline' || i || '@example.test' AS email, 'subscribed' AS status FROM range(5) t(i)`);
        const plan = await planPush({ crm, db }, { from: 'upserts', runId: 'run-d', createMissing: false, dryRun: false });
        const store = new PushPlanStore(db);
        const ledger = new PushLedger(db);
        const first = await sendBatch({ crm, ledger }, { source: plan.source, runId: 'run-d', rows: await store.load('run-d', 0, 5), deadline: Date.now() - 1 });
        expect(first).toMatchObject({ sent: 1, succeeded: 1, nextSeq: 1 });
        const rest = await sendBatch({ crm, ledger }, { source: plan.source, runId: 'run-d', rows: await store.load('run-d', first.nextSeq, 5) });
        expect(rest).toMatchObject({ sent: 4, succeeded: 4, nextSeq: 5 });
        expect(upsertRequests(sim)).toBe(5);
      });
    });
  });

  it('stops the batch on rejected credentials instead of failing every row', async () => {
    await withSimClient({ contacts: 5, seed: 10 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        await db.query(`CREATE TABLE upserts AS SELECT 'auth' || i || '@example.test' AS email, 'subscribed' AS status FROM range(40) t(i)`);
        const plan = await planPush({ crm: pushCrmFromClient(client), db }, { from: 'upserts', runId: 'run-a', createMissing: false, dryRun: false });
        const wrong = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: 'not-the-password', limiter: createRateLimiter({ maxRps: 500 }) });
        try {
          const rows = await new PushPlanStore(db).load('run-a', 0, plan.toSend);
          await expect(sendBatch({ crm: pushCrmFromClient(wrong), ledger: new PushLedger(db) }, { source: plan.source, runId: 'run-a', rows, concurrency: 4 })).rejects.toMatchObject({
            statusCode: 401,
          });
          // At most the rows already in progress were tried; nothing was recorded as a row failure.
          expect(upsertRequests(sim)).toBeLessThanOrEqual(4);
          expect(await db.query(`SELECT * FROM _push_ledger`)).toEqual([]);
        } finally {
          await wrong.close();
        }
      });
    });
  });

  it('a pushed row that turns invalid is a dead letter until it is fixed or dropped, and never sent meanwhile', async () => {
    await withSimClient({ contacts: 5, seed: 13 }, { limiter: createRateLimiter({ maxRps: 500 }) }, async (sim, client) => {
      await withPushDb(async (db) => {
        const crm = pushCrmFromClient(client);
        await db.query(`CREATE TABLE upserts AS SELECT 'turn' || i || '@example.test' AS email, 'subscribed' AS status, 'N' || i AS first_name FROM range(3) t(i)`);
        await pushAll(db, crm, 'run-1');
        await db.query(`UPDATE upserts SET status = 'vip' WHERE email IN ('turn0@example.test', 'turn1@example.test')`);
        const second = await pushAll(db, crm, 'run-2');
        expect(second.plan.counts).toEqual({ new: 0, changed: 0, retry: 0, unchanged: 1, invalid: 2 });
        expect(upsertRequests(sim)).toBe(3);
        const dead = async () => (await db.query(`SELECT push_key FROM push_dead_letters ORDER BY push_key`)).map((r) => r.push_key);
        expect(await dead()).toEqual(['turn0@example.test', 'turn1@example.test']);

        // turn0 is fixed back to what was pushed, turn1 is dropped from the source.
        await db.query(`UPDATE upserts SET status = 'subscribed' WHERE email = 'turn0@example.test'`);
        await db.query(`DELETE FROM upserts WHERE email = 'turn1@example.test'`);
        const third = await pushAll(db, crm, 'run-3');
        expect(third.plan.counts).toEqual({ new: 0, changed: 0, retry: 0, unchanged: 2, invalid: 0 });
        expect(upsertRequests(sim)).toBe(3);
        expect(await dead()).toEqual([]);
        const outcomes = await db.query(`SELECT push_key, outcome FROM _push_ledger ORDER BY push_key`);
        expect(outcomes.map((r) => r.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      });
    });
  });
});
