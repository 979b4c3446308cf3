import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { signBody } from '../../src/webhooks/verify-signature.js';

export interface Delivery {
  headers: Record<string, string>;
  body: Buffer;
  deliveryId: string;
}

// Makes each default body unique: the receiver stores a body once, whatever delivery id it comes under.
let made = 0;

export function makeDelivery(opts: { secret: string; webhookId?: number; event?: string; data?: Record<string, unknown>; deliveryId?: string; timestamp?: string }): Delivery {
  const webhookId = opts.webhookId ?? 1;
  const event = opts.event ?? 'contact.updated';
  const deliveryId = opts.deliveryId ?? randomUUID();
  const body = Buffer.from(
    JSON.stringify({
      event,
      timestamp: opts.timestamp ?? new Date().toISOString(),
      webhook_id: webhookId,
      data: opts.data ?? { contact: { id: 7, email: 'a@example.com', first_name: 'A', last_name: `B${++made}`, status: 'subscribed', created_at: '2026-01-01 00:00:00' } },
    }),
  );
  return {
    deliveryId,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'CRM-Webhooks/1.0',
      'x-service-event': event,
      'x-service-signature': signBody(body, opts.secret),
      'x-service-webhook-id': String(webhookId),
      'x-service-delivery': deliveryId,
    },
  };
}

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'crmsync-webhooks-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
