import { describe, expect, it } from 'vitest';
import { isPlainEnvelopeFor, plainEnvelopeTime } from '../../src/webhooks/handle-webhook-request.js';
import { parseEventTime } from '../../src/webhooks/event-payload.js';
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

  it('reads the event time once, as the time-window check reads it', () => {
    const body = { event: 'contact.updated', timestamp: '2026-01-01 10:00:00', webhook_id: 1, data: {} };
    // Zone-less means UTC (parseEventTime), not the machine's zone (Date.parse).
    expect(plainEnvelopeTime(body, 'contact.updated', 1)).toBe(Date.UTC(2026, 0, 1, 10));
    expect(plainEnvelopeTime({ ...body, timestamp: '2026-01-01T10:00:00+02:00' }, 'contact.updated', 1)).toBe(Date.UTC(2026, 0, 1, 8));
    expect(plainEnvelopeTime({ ...body, timestamp: 'not a date' }, 'contact.updated', 1)).toBeNaN();
    expect(plainEnvelopeTime({ ...body, webhook_id: 2 }, 'contact.updated', 1)).toBeNaN();
  });

  it('parses a timestamp exactly when zod does (the one parse stands for both)', () => {
    const pad = (x: number, w = 2): string => String(x).padStart(w, '0');
    let checked = 0;
    for (const y of [0, 1970, 2026, 9999])
      for (let mo = 0; mo <= 13; mo++)
        for (const d of [0, 1, 29, 30, 31, 32])
          for (const h of [0, 23, 24, 25])
            for (const mi of [0, 59, 60])
              for (const sec of [0, 59, 60])
                for (const rest of ['', '.5', '.123456789', 'Z', '+02:00'])
                  for (const sep of [' ', 'T']) {
                    const ts = `${pad(y, 4)}-${pad(mo)}-${pad(d)}${sep}${pad(h)}:${pad(mi)}:${pad(sec)}${rest}`;
                    checked++;
                    if (Number.isFinite(parseEventTime(ts)) !== Number.isFinite(Date.parse(ts))) expect.fail(`${ts}: parseEventTime and Date.parse disagree`);
                  }
    expect(checked).toBeGreaterThan(50_000);
  });
});
