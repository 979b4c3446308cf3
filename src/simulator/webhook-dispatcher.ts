import { randomBytes } from 'node:crypto';
import type { SimEvent } from './events.js';
import { IncomingWebhooks } from './incoming-webhooks.js';
import type { DeliveryRec, WebhookRec } from './model.js';
import { SimError } from './sim-error.js';
import { formatIsoZ } from './time.js';
import { validateWebhookBody } from './webhook-validate.js';
import { buildDeliveryBody } from './webhook-signature.js';

/** Retry intervals after the 1st..5th failed attempt (spec, Delivery rules). */
export const RETRY_INTERVALS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 86_400_000] as const;
export const DISABLE_AFTER_FAILURES = 5;
export const RECEIVER_TIMEOUT_MS = 30_000;
export const USER_AGENT = 'CRM-Service-Webhooks/1.0';
const MAX_DELIVERIES_KEPT = 100_000;

export interface DispatcherOptions {
  timeScale: number;
  allowHttp: boolean;
  now: () => number;
  /** `/webhooks` are the free plugin's incoming webhooks (real mode), and nothing goes out. */
  incomingOnly?: boolean;
}

/**
 * Outbound webhooks: registration, signed delivery, retries and the delivery log. One sender per
 * webhook takes due deliveries in creation order; a failed delivery waits for its retry while
 * later ones go ahead, so receivers can see events out of order after a failure.
 */
export class WebhookDispatcher {
  readonly hooks = new Map<number, WebhookRec>();
  readonly deliveries = new Map<number, DeliveryRec>();
  #nextHook = 1;
  #nextDelivery = 1;
  readonly #busy = new Set<number>();
  /** Pending deliveries per webhook in creation order (kept short: final ones leave it). */
  readonly #queues = new Map<number, DeliveryRec[]>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inflight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #closed = false;

  /** Real mode's `/webhooks`: incoming webhooks only (the free plugin has no outbound ones). */
  readonly incoming: IncomingWebhooks;
  readonly incomingOnly: boolean;

  constructor(private readonly opts: DispatcherOptions) {
    this.incoming = new IncomingWebhooks(opts.now);
    this.incomingOnly = opts.incomingOnly ?? false;
  }

  get timeoutMs(): number {
    return Math.max(1000, RECEIVER_TIMEOUT_MS * this.opts.timeScale);
  }

  // ---- registration

  create(body: Record<string, unknown>): WebhookRec {
    const v = validateWebhookBody(body, false, this.opts.allowHttp);
    const now = this.opts.now();
    const rec: WebhookRec = {
      id: this.#nextHook++,
      name: v.name as string,
      url: v.url as string,
      events: v.events as string[],
      status: v.status ?? 'active',
      secret: v.secret ?? randomBytes(24).toString('hex'),
      createdAt: now,
      updatedAt: now,
      consecutiveFailures: 0,
    };
    this.hooks.set(rec.id, rec);
    return rec;
  }

  require(id: number): WebhookRec {
    const h = this.hooks.get(id);
    if (!h) throw new SimError(404, 'rest_post_invalid_id', 'Invalid webhook ID; list webhooks to find the id.');
    return h;
  }

  update(id: number, body: Record<string, unknown>): WebhookRec {
    const old = this.require(id);
    const next: WebhookRec = { ...old, ...validateWebhookBody(body, true, this.opts.allowHttp), updatedAt: this.opts.now() };
    if (next.status === 'active' && old.status !== 'active') next.consecutiveFailures = 0;
    this.hooks.set(id, next);
    return next;
  }

  delete(id: number): WebhookRec {
    const h = this.require(id);
    this.hooks.delete(id);
    for (const d of this.deliveries.values()) {
      if (d.webhookId === id && d.status === 'pending') {
        d.status = 'failed';
        d.nextAttemptAt = null;
      }
    }
    return h;
  }

  // ---- delivery

  /** Called for every state event; cheap when no webhook listens. */
  onEvent(e: SimEvent): void {
    if (this.#closed || this.hooks.size === 0) return;
    for (const h of this.hooks.values()) {
      if (h.status !== 'active' || !h.events.includes(e.event)) continue;
      this.#enqueue(h, e.event, e.data, e.at);
    }
  }

  /** Sends a test payload now and resolves with its delivery record. */
  async test(id: number): Promise<DeliveryRec> {
    const h = this.require(id);
    const d = this.#createDelivery(h, h.events[0] ?? 'contact.updated', { test: true, message: 'Test payload from the CRM simulator' }, this.opts.now());
    await this.#attempt(d);
    return { ...d };
  }

  #createDelivery(h: WebhookRec, event: string, data: Record<string, unknown>, at: number): DeliveryRec {
    const payload = { event, timestamp: formatIsoZ(at), webhook_id: h.id, data };
    const { body, signature } = buildDeliveryBody(payload, h.secret);
    const d: DeliveryRec = {
      id: this.#nextDelivery++,
      webhookId: h.id,
      event,
      status: 'pending',
      responseCode: 0,
      responseTime: 0,
      attemptedAt: null,
      attempts: 0,
      nextAttemptAt: this.opts.now(),
      body,
      signature,
      createdAt: this.opts.now(),
    };
    this.deliveries.set(d.id, d);
    const queue = this.#queues.get(h.id) ?? [];
    queue.push(d);
    this.#queues.set(h.id, queue);
    if (this.deliveries.size > MAX_DELIVERIES_KEPT) {
      for (const [oldId, old] of this.deliveries) {
        if (old.status !== 'pending') {
          this.deliveries.delete(oldId);
          break;
        }
      }
    }
    return d;
  }

  #enqueue(h: WebhookRec, event: string, data: Record<string, unknown>, at: number): void {
    this.#createDelivery(h, event, data, at);
    this.#pump(h.id);
  }

  /** Runs the sender of one webhook until no delivery is due; re-armed by timers for retries. */
  #pump(hookId: number): void {
    if (this.#busy.has(hookId) || this.#closed) return;
    this.#busy.add(hookId);
    const run = (async () => {
      try {
        for (;;) {
          if (this.#closed) return;
          const h = this.hooks.get(hookId);
          if (!h || h.status !== 'active') return;
          const now = this.opts.now();
          const queue = this.#queues.get(hookId) ?? [];
          // Finished deliveries leave from the front; the head is usually the one to send.
          while (queue.length > 0 && (queue[0] as DeliveryRec).status !== 'pending') queue.shift();
          const next = queue.find((d) => d.status === 'pending' && d.nextAttemptAt !== null && d.nextAttemptAt <= now);
          if (!next) return;
          await this.#attempt(next);
        }
      } finally {
        this.#busy.delete(hookId);
      }
    })();
    this.#inflight.add(run);
    // close() awaits #inflight with allSettled; the catch only keeps this copy from going unhandled.
    run.finally(() => this.#inflight.delete(run)).catch(() => undefined);
  }

  async #attempt(d: DeliveryRec): Promise<void> {
    const h = this.hooks.get(d.webhookId);
    if (!h) return;
    d.attempts++;
    d.attemptedAt = this.opts.now();
    const started = performance.now();
    let code = 0;
    try {
      const res = await fetch(h.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': USER_AGENT,
          'X-Service-Event': d.event,
          'X-Service-Signature': d.signature,
          'X-Service-Webhook-ID': String(h.id),
          'X-Service-Delivery': String(d.id),
        },
        body: d.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.#abort.signal]),
      });
      code = res.status;
      await res.body?.cancel().catch(() => undefined);
    } catch {
      code = 0;
    }
    d.responseTime = Math.round(performance.now() - started);
    d.responseCode = code;
    if (this.#closed) return;
    if (code >= 200 && code < 300) {
      d.status = 'success';
      d.nextAttemptAt = null;
      h.consecutiveFailures = 0;
      return;
    }
    h.consecutiveFailures++;
    if (h.consecutiveFailures >= DISABLE_AFTER_FAILURES) {
      h.status = 'failed';
      h.updatedAt = this.opts.now();
      for (const other of this.deliveries.values()) {
        if (other.webhookId === h.id && other.status === 'pending') {
          other.status = 'failed';
          other.nextAttemptAt = null;
        }
      }
      d.status = 'failed';
      d.nextAttemptAt = null;
      return;
    }
    const interval = RETRY_INTERVALS_MS[d.attempts - 1];
    if (interval === undefined) {
      d.status = 'failed';
      d.nextAttemptAt = null;
      return;
    }
    const wait = interval * this.opts.timeScale;
    d.nextAttemptAt = this.opts.now() + wait;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        this.#pump(h.id);
      },
      Math.ceil(wait) + 1,
    );
    timer.unref();
    this.#timers.add(timer);
  }

  /** Waits until no delivery is in flight or pending (for tests), or until timeoutMs. */
  async settle(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const pendingSoon = [...this.#queues.values()].some((q) => q.some((d) => d.status === 'pending'));
      if (this.#inflight.size === 0 && !pendingSoon) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  json(h: WebhookRec): Record<string, unknown> {
    return {
      id: h.id,
      name: h.name,
      url: h.url,
      events: [...h.events],
      status: h.status,
      secret: h.secret,
      created_at: formatIsoZ(h.createdAt),
      updated_at: formatIsoZ(h.updatedAt),
    };
  }

  deliveryJson(d: DeliveryRec): Record<string, unknown> {
    return {
      id: d.id,
      event: d.event,
      status: d.status,
      response_code: d.responseCode,
      response_time: d.responseTime,
      attempted_at: d.attemptedAt === null ? null : formatIsoZ(d.attemptedAt),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await Promise.allSettled([...this.#inflight]);
  }
}
