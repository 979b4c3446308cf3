// Apply throughput: deliveries per second from the spool into DuckDB through the warehouse
// worker's apply activity (applyWebhookSpool over a WarehouseOwner), for events that need no
// refetch (email.*) and for contact events refetched from the simulator, in one run.
//   node --import tsx bench/webhooks-apply.ts [--events 20000]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createWebhookActivities } from '../activities/webhook-activities.js';
import { createCrmClient } from '../src/crm/index.js';
import { silentLogger } from '../src/logger.js';
import { startSimulator } from '../src/simulator/index.js';
import { openWarehouseOwner } from '../src/warehouse/index.js';
import { createClientRefetcher } from '../src/webhooks/client-refetcher.js';
import { withSpool } from '../src/webhooks/spool.js';
import { createSpoolRangeReader } from '../src/webhooks/spool-range-reader.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' } } });
const EVENTS = Number(values.events);
const root = join(import.meta.dirname, '.tmp');
mkdirSync(root, { recursive: true });
const work = mkdtempSync(join(root, 'webhooks-apply-'));

async function phase(
  name: string,
  contacts: number,
  make: (i: number) => { event: string; data: Record<string, unknown> },
): Promise<{ events: number; seconds: number; perSecond: number; batches: number }> {
  const dir = join(work, name);
  const sim = await startSimulator({ seed: 9, contacts });
  const client = createCrmClient({ baseUrl: sim.baseUrl, username: sim.credentials.username, password: sim.credentials.password });
  try {
    return await withSpool({ dir: join(dir, 'spool') }, async (spool) => {
      await Promise.all(
        Array.from({ length: EVENTS }, (_, i) => {
          const e = make(i);
          const body = Buffer.from(JSON.stringify({ event: e.event, timestamp: new Date().toISOString(), webhook_id: 1, data: e.data }));
          return spool.append({ deliveryId: `${name}-${i}`, webhookId: 1, event: e.event, known: true, receivedAt: Date.now(), body });
        }),
      );
      // The owner opens and migrates the file once: the clock starts after that, as a worker's would.
      const owner = await openWarehouseOwner({ dbPath: join(dir, 'crm.duckdb'), lakePath: join(dir, 'lake') });
      try {
        const acts = createWebhookActivities({
          writes: owner,
          spool: createSpoolRangeReader(join(dir, 'spool')),
          refetcher: createClientRefetcher(client),
          logger: silentLogger,
          publishEveryMs: 0,
        });
        const target = spool.stats().committedSeq;
        const t0 = performance.now();
        let appliedSeq = 0;
        let batches = 0;
        // As webhookApplyWorkflow calls it, one range after another (default batch size).
        while (appliedSeq < target) {
          const r = await acts.applyWebhookSpool({ batchSize: 2_000, waitMs: 0 });
          if (r.appliedSeq <= appliedSeq) throw new Error(`the apply activity made no progress at seq ${appliedSeq}`);
          appliedSeq = r.appliedSeq;
          batches++;
        }
        const seconds = (performance.now() - t0) / 1000;
        return { events: appliedSeq, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(appliedSeq / seconds), batches };
      } finally {
        await owner.close();
      }
    });
  } finally {
    await client.close();
    await sim.close();
  }
}

try {
  const email = await phase('email', 100, (i) => ({
    event: 'email.opened',
    data: { email: { id: i, subject: 'S', contact_id: (i % 100) + 1, campaign_id: null, opened_at: new Date().toISOString() } },
  }));
  process.stdout.write(`email events (no refetch): ${email.perSecond}/s (${email.events} in ${email.seconds} s, ${email.batches} batches)\n`);
  // One contact per event: every event costs a refetch (no coalescing, no late-delivery skip).
  const contact = await phase('contact', EVENTS, (i) => ({ event: 'contact.updated', data: { contact: { id: i + 1, email: 'x@example.com', status: 'subscribed' } } }));
  process.stdout.write(`contact events (one refetch each): ${contact.perSecond}/s (${contact.events} in ${contact.seconds} s, ${contact.batches} batches)\n`);
  const result = { benchmark: 'webhooks-apply', at: new Date().toISOString(), node: process.version, events: EVENTS, email, contact };
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'webhooks-apply.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
