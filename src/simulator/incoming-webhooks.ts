import { randomBytes } from 'node:crypto';
import { SimError } from './sim-error.js';

export interface IncomingWebhookRec {
  id: number;
  key: string;
  /** Everything the caller sent (url excepted), stored and echoed verbatim, as the real plugin does. */
  value: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/**
 * The free plugin's `/webhooks`: *incoming* webhooks (an address on the site that creates contacts).
 * `value.url` is always the site's own `/?fluentcrm=1&route=contact&hash=<key>`, whatever url was
 * sent; PUT ignores `url`; nothing is ever sent outbound (site-ny/GET_webhooks.json and its README).
 */
export class IncomingWebhooks {
  readonly hooks = new Map<number, IncomingWebhookRec>();
  #next = 1;

  constructor(private readonly now: () => number) {}

  create(body: Record<string, unknown>, origin: string): IncomingWebhookRec {
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (!name) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): name.', { status: 422, body: { name: { required: 'The name field is required.' } } });
    const key = randomBytes(16).toString('hex');
    const at = this.now();
    const rec: IncomingWebhookRec = { id: this.#next++, key, value: this.#value(body, `${origin}/?fluentcrm=1&route=contact&hash=${key}`), createdAt: at, updatedAt: at };
    this.hooks.set(rec.id, rec);
    return rec;
  }

  update(id: number, body: Record<string, unknown>): IncomingWebhookRec {
    const old = this.require(id);
    const next = { ...old, value: this.#value({ ...old.value, ...body }, old.value.url as string), updatedAt: this.now() };
    this.hooks.set(id, next);
    return next;
  }

  delete(id: number): void {
    this.require(id);
    this.hooks.delete(id);
  }

  /** The webhook whose site URL carries `hash=key` (the plugin looks it up by its stored key). */
  findByKey(key: string): IncomingWebhookRec | undefined {
    if (!key) return undefined;
    for (const h of this.hooks.values()) if (h.key === key) return h;
    return undefined;
  }

  require(id: number): IncomingWebhookRec {
    const h = this.hooks.get(id);
    if (!h)
      throw new SimError(404, null, 'No query results for model [FluentCrm\\App\\Models\\Meta].', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Meta].' } });
    return h;
  }

  #value(body: Record<string, unknown>, url: string): Record<string, unknown> {
    const { url: _ignored, ...rest } = body;
    return { name: rest.name, url, ...rest, tags: rest.tags ?? [], lists: rest.lists ?? [], companies: rest.companies ?? [] };
  }
}
