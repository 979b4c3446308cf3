import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WarehouseReadOnlyError, withCatalog, withWarehouse, type WarehouseHandle } from '../../src/warehouse/index.js';
import type { WebhookBatchWrite } from '../../src/warehouse/commit-webhook-batch.js';
import { closeTempWarehouse, openTempWarehouse, tempPaths } from './temp-warehouse.js';

const at = new Date('2026-03-01T10:00:00Z');

function batch(spoolId: string, appliedSeq: number | null, deliveryId: string): WebhookBatchWrite {
  return {
    spoolId,
    appliedSeq,
    loadId: `webhooks-${deliveryId}`,
    syncedAt: at,
    webhookEvents: [
      {
        delivery_id: deliveryId,
        event: 'contact.updated',
        webhook_id: 1,
        received_at: at.toISOString(),
        event_at: at.toISOString(),
        known_event: true,
        spool_seq: appliedSeq ?? 1,
        payload: '{}',
        status: 'applied',
        error: null,
        applied_at: at.toISOString(),
      },
    ],
    emailEvents: [],
    commerceEvents: [],
    contactMarks: [{ contact_id: 7, last_event_at: at.toISOString(), last_delivery_id: deliveryId, deleted_event_at: null }],
  };
}

describe('the webhook applier tables as named warehouse operations', () => {
  const t: { p?: ReturnType<typeof tempPaths>; w?: WarehouseHandle } = {};
  beforeAll(async () => Object.assign(t, await openTempWarehouse()));
  afterAll(() => closeTempWarehouse(t));

  it('commits a batch once and never moves the offset back', async () => {
    const w = t.w!;
    expect(await w.webhooks.appliedSeq('s1')).toBe(0);
    await w.webhooks.commitBatch(batch('s1', 5, 'd5'));
    await w.webhooks.commitBatch(batch('s1', 5, 'd5')); // a re-applied batch after a lost offset commit
    await w.webhooks.commitBatch(batch('s1', 3, 'd3')); // an older range applied late
    expect(await w.webhooks.appliedSeq('s1')).toBe(5);
    expect(await w.webhooks.appliedSeq('other')).toBe(0);
    expect(await w.query(`SELECT delivery_id FROM webhook_events ORDER BY delivery_id`)).toEqual([{ delivery_id: 'd3' }, { delivery_id: 'd5' }]);
  });

  it('rolls the whole batch back when one statement fails', async () => {
    const w = t.w!;
    const bad = { ...batch('s2', 9, 'd9'), contactMarks: [{ contact_id: 8, last_event_at: 'not a time', last_delivery_id: 'd9', deleted_event_at: null }] };
    await expect(w.webhooks.commitBatch(bad)).rejects.toThrow();
    expect(await w.webhooks.appliedSeq('s2')).toBe(0);
    expect(await w.query(`SELECT count(*) AS n FROM webhook_events WHERE delivery_id = 'd9'`)).toEqual([{ n: 0 }]);
  });

  it('lists unresolved dead letters in spool order, after a cursor, so a retry in parts meets each once', async () => {
    const w = t.w!;
    const letter = (deliveryId: string, spoolSeq: number) => ({
      deliveryId,
      spoolSeq,
      webhookId: 1,
      event: 'contact.updated',
      known: true,
      receivedAt: at,
      reason: 'apply_error' as const,
      error: 'E',
      body: Buffer.from('{}'),
    });
    await w.webhooks.recordDeadLetters([letter('c', 4), letter('a', 2), letter('b', 2), letter('d', 9)], at);
    const ids = async (opts?: Parameters<typeof w.webhooks.deadLetters>[0]) => (await w.webhooks.deadLetters(opts)).map((d) => d.deliveryId);
    expect(await ids()).toEqual(['a', 'b', 'c', 'd']);
    expect(await ids({ limit: 2 })).toEqual(['a', 'b']);
    expect(await ids({ limit: 2, after: { spoolSeq: 2, deliveryId: 'a' } })).toEqual(['b', 'c']);
    expect(await ids({ after: { spoolSeq: 4, deliveryId: 'c' } })).toEqual(['d']);
    expect(await ids({ after: { spoolSeq: 9, deliveryId: 'd' } })).toEqual([]);
  });

  it('refuses writes on a read-only handle (the catalog readers open), naming the operation', async () => {
    const p = tempPaths();
    try {
      await withWarehouse({ dbPath: p.dbPath, lakePath: p.lakePath, write: true }, (w) => w.publishLake(['webhook_dead_letters']));
      await withCatalog({ catalogPath: join(p.lakePath, 'catalog.duckdb') }, async (r) => {
        await expect(r.webhooks.commitBatch(batch('s', 1, 'd1'))).rejects.toBeInstanceOf(WarehouseReadOnlyError);
        expect(await r.webhooks.deadLetters()).toEqual([]);
      });
    } finally {
      p.cleanup();
    }
  });
});
