import { join } from 'node:path';
import { createCrmClient, type Contact, type CrmClient } from '../../src/crm/index.js';
import { startSimulator, type RunningSimulator, type SimulatorTruth } from '../../src/simulator/index.js';
import { createClientRefetcher } from '../../src/webhooks/client-refetcher.js';
import { createSecretResolver } from '../../src/webhooks/secret-resolver.js';
import { withWebhookService, type WebhookService } from '../../src/webhooks/webhook-service.js';
import type { WarehouseHandle } from '../../src/warehouse/index.js';
import { withTempDir } from './helpers.js';
import { withOwnerApply } from './owner-apply.js';

export interface E2eEnv {
  sim: RunningSimulator;
  client: CrmClient;
  service: WebhookService;
  secretsFile: string;
  dir: string;
  /** A job on the warehouse owner (the one writer of the test's DuckDB file). */
  warehouse: <T>(fn: (w: WarehouseHandle) => Promise<T>) => Promise<T>;
  /** Applies everything the receiver has spooled, as the warehouse worker's apply activity does. */
  applySpooled(): Promise<void>;
}

/** Simulator (signing deliveries over real HTTP) + receiver + the apply activity over a warehouse owner in a temp dir. */
export async function withE2eEnv<T>(fn: (env: E2eEnv) => Promise<T>, opts: { contacts?: number; batchSize?: number; mode?: 'spec' | 'real' } = {}): Promise<T> {
  return withTempDir(async (dir) => {
    const sim = await startSimulator({ seed: 11, contacts: opts.contacts ?? 30, allowHttpWebhookUrls: true, webhookTimeScale: 0.001, mode: opts.mode ?? 'spec', outboundWebhooks: true });
    const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password, retry: { maxRetries: 0 } });
    const secretsFile = join(dir, 'webhook-secrets.json');
    try {
      return await withOwnerApply({ dir, refetcher: createClientRefetcher(client) }, async (a) => {
        const acts = a.activities();
        return await withWebhookService(
          {
            spoolDir: a.spoolDir,
            host: '127.0.0.1',
            port: 0,
            // A long reload interval: new and rotated secrets must be picked up by the re-read on a miss.
            secrets: createSecretResolver({ secretsFile, reloadIntervalMs: 600_000 }),
          },
          (service) =>
            fn({
              sim,
              client,
              service,
              secretsFile,
              dir,
              warehouse: (f) => a.owner.run(f),
              applySpooled: async () => {
                await a.applyUntil(acts, service.spool.stats().committedSeq, opts.batchSize ? { batchSize: opts.batchSize } : {});
              },
            }),
        );
      });
    } finally {
      await client.close();
      await sim.close();
    }
  });
}

/** Loads every contact as a backfill would (so deletes have rows to tombstone). */
export async function backfillContacts(env: E2eEnv): Promise<number> {
  const all: Contact[] = [];
  for (let page = 1; ; page++) {
    const p = await env.client.contacts.listPage({ page, perPage: 100, order: 'asc', orderBy: 'id' });
    all.push(...p.items);
    if (p.items.length < 100) break;
  }
  await env.warehouse((w) => w.loadContacts(all, { loadId: 'test-backfill', syncedAt: new Date() }));
  return all.length;
}

/** Differences between the warehouse and the simulator's truth for the given contact ids. */
export async function contactDifferences(env: E2eEnv, ids: readonly number[], truth: SimulatorTruth): Promise<string[]> {
  const want = new Map(truth.contacts.map((c) => [c.id, c]));
  const rows = await env.warehouse((w) =>
    w.query(
      `SELECT id, email, first_name, last_name, status, list_sort(coalesce(tag_ids, [])) AS tags, list_sort(coalesce(list_ids, [])) AS lists,
              epoch_ms(updated_at) AS updated_ms, _deleted_at IS NOT NULL AS deleted
         FROM contacts WHERE id IN (SELECT unnest(from_json($1::JSON, '["BIGINT"]')))`,
      [JSON.stringify(ids)],
    ),
  );
  const held = new Map(rows.map((r) => [Number(r.id), r]));
  const out: string[] = [];
  for (const id of ids) {
    const t = want.get(id);
    const r = held.get(id);
    if (!t) {
      if (!r || !r.deleted) out.push(`#${id} is deleted in the CRM but ${r ? 'live' : 'absent (never tombstoned)'} in the warehouse`);
      continue;
    }
    if (!r) {
      out.push(`#${id} missing from the warehouse`);
      continue;
    }
    const fields: [string, unknown, unknown][] = [
      ['deleted', r.deleted, false],
      ['email', r.email, t.email],
      ['first_name', r.first_name, t.first_name],
      ['last_name', r.last_name, t.last_name],
      ['status', r.status, t.status],
      ['tags', JSON.stringify((r.tags as unknown[]).map(Number)), JSON.stringify([...t.tags].sort((a, b) => a - b))],
      ['lists', JSON.stringify((r.lists as unknown[]).map(Number)), JSON.stringify([...t.lists].sort((a, b) => a - b))],
      ['updated_at', Number(r.updated_ms), Date.parse(t.updated_at_iso)],
    ];
    for (const [f, a, b] of fields) if ((a ?? null) !== (b ?? null)) out.push(`#${id} ${f}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
  }
  return out;
}
