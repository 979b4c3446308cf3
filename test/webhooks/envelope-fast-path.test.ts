import { describe, expect, it } from 'vitest';
import { isPlainEnvelopeFor } from '../../src/webhooks/handle-webhook-request.js';
import { WebhookEnvelope } from '../../src/webhooks/webhook-envelope.js';
import { makeDelivery } from './helpers.js';
import { createRng } from '../../src/simulator/rng.js';

/** Deterministic PRNG (the simulator's mulberry32) so a failure can be replayed from its seed. */
const rng = createRng;

/** What the receiver decided before the fast path: zod, then the header match. */
const zodAccepts = (json: unknown, event: string, webhookId: number): boolean => {
  const r = WebhookEnvelope.safeParse(json);
  return r.success && r.data.event === event && r.data.webhook_id === webhookId;
};

describe('the structural envelope check on the hot path', () => {
  it('takes the usual delivery without zod', () => {
    const d = makeDelivery({ secret: 'x'.repeat(16), webhookId: 42, event: 'email.opened' });
    expect(isPlainEnvelopeFor(JSON.parse(d.body.toString()), 'email.opened', 42)).toBe(true);
    expect(isPlainEnvelopeFor({ event: 'contact.updated', timestamp: '2026-01-01T00:00:00Z', webhook_id: 1, data: {}, signature: 'sha256=inner' }, 'contact.updated', 1)).toBe(true);
  });

  it('never accepts what zod refuses, over thousands of mutated envelopes', () => {
    const rand = rng(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const values = [
      undefined,
      null,
      0,
      -1,
      1,
      1.5,
      2 ** 53,
      Number.MAX_SAFE_INTEGER,
      '1',
      '01',
      '',
      ' ',
      'x'.repeat(41),
      'x'.repeat(101),
      'x'.repeat(201),
      [],
      [1],
      {},
      { a: 1 },
      true,
      'contact.updated',
      'contact updated',
      'contact.updated\n',
      'é.x',
      '2026-01-01T00:00:00Z',
      '2026-01-01 00:00:00',
      'not a date',
      '2026-13-45T99:99:99Z',
      new Date(Date.UTC(2026, 0, 1)).toString(),
    ];
    const keys = ['event', 'timestamp', 'webhook_id', 'data', 'signature'] as const;
    let fast = 0;
    let agreed = 0;
    for (let i = 0; i < 5000; i++) {
      const event = pick(['contact.updated', 'email.opened', 'x', 'a'.repeat(100), 'a'.repeat(101), 'weird event', 'contact.updated!']);
      const webhookId = pick([0, 1, 7, 123456789012345]);
      const base: Record<string, unknown> = { event, timestamp: new Date(Date.UTC(2026, 0, 1 + (i % 300))).toISOString(), webhook_id: webhookId, data: { contact: { id: i } } };
      if (rand() < 0.5) base.signature = 'sha256=inner';
      const mutations = Math.floor(rand() * 3);
      for (let m = 0; m < mutations; m++) {
        const k = pick(keys);
        if (rand() < 0.2) delete base[k];
        else base[k] = pick(values);
      }
      const json: unknown = rand() < 0.05 ? pick(values) : base;
      const ok = isPlainEnvelopeFor(json, event, webhookId);
      const zod = zodAccepts(json, event, webhookId);
      if (ok) {
        fast++;
        expect(zod, JSON.stringify({ json, event, webhookId })).toBe(true);
      }
      if (ok === zod) agreed++;
    }
    // Both paths are exercised, and the fast one covers most valid envelopes.
    expect(fast).toBeGreaterThan(500);
    expect(agreed).toBeGreaterThan(4000);
  });
});
