import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { asObject, parsePage, parseRecord } from '../parse.js';
import { Secret } from '../../secret.js';
import type { JsonObject, Page, Webhook, WebhookDelivery, WebhookWrite } from '../types.js';

export interface WebhooksApi {
  list(): Promise<Webhook[]>;
  create(body: WebhookWrite): Promise<Webhook | null>;
  update(id: number, body: Partial<WebhookWrite>): Promise<Webhook | null>;
  delete(id: number): Promise<void>;
  test(id: number): Promise<JsonObject>;
  deliveriesPage(id: number, q: { page: number; perPage: number; status?: 'success' | 'failed' | 'pending' }): Promise<Page<WebhookDelivery>>;
}

export function createWebhooksApi(ctx: ClientContext): WebhooksApi {
  const { exec, schemas } = ctx;

  /**
   * The secret leaves `raw` and is wrapped so that logging a webhook cannot print it. The real
   * deployment echoes it inside `value`, beside the incoming webhook's `key` (the hash in its URL,
   * which lets anyone create contacts): both are redacted there too.
   */
  function toWebhook(rec: unknown, route: string): Webhook {
    const w = parseRecord(schemas.Webhook, rec, route);
    const raw = { ...w.raw };
    if ('secret' in raw) raw.secret = '[redacted]';
    if ('key' in raw) raw.key = '[redacted]';
    const value = raw.value && typeof raw.value === 'object' && !Array.isArray(raw.value) ? { ...(raw.value as JsonObject) } : undefined;
    const valueSecret = typeof value?.secret === 'string' ? value.secret : null;
    if (value) {
      if ('secret' in value) value.secret = '[redacted]';
      if (typeof value.url === 'string') value.url = value.url.replace(/([?&]hash=)[^&#]*/i, '$1[redacted]');
      raw.value = value;
    }
    const secret = w.secret ?? valueSecret;
    return { ...w, secret: secret ? new Secret(secret) : null, raw };
  }

  function listIn(res: unknown, route: string): Webhook[] {
    const o = asObject(res ?? {}, route);
    const arr = Array.isArray(o.webhooks) ? o.webhooks : [];
    return arr.map((r) => toWebhook(r, route));
  }

  function pick(res: unknown, id: number | undefined, route: string): Webhook | null {
    const o = asObject(res ?? {}, route);
    const all = listIn(o, route);
    const wantId = id ?? (typeof o.id === 'number' || typeof o.id === 'string' ? Number(o.id) : undefined);
    const found = wantId !== undefined ? all.find((w) => w.id === wantId) : undefined;
    if (found) return found;
    const single = o.webhook && typeof o.webhook === 'object' ? { id: wantId, ...(o.webhook as JsonObject) } : 'id' in o && 'url' in o ? o : null;
    return single && single.id !== undefined ? toWebhook(single, route) : null;
  }

  function checkWrite(body: Partial<WebhookWrite>, create: boolean): JsonObject {
    if (create && (!body.name || !body.url || !Array.isArray(body.events) || body.events.length === 0)) {
      throw new CrmArgumentError('A webhook needs name, url and at least one event');
    }
    // The server decides which URLs it accepts (the interface: https only, 400 invalid_webhook_url).
    if (body.url !== undefined && body.url.length > 2000) throw new CrmArgumentError('A webhook url must be at most 2000 characters');
    const { secret, ...rest } = body;
    return secret === undefined ? rest : { ...rest, secret: secret instanceof Secret ? secret.reveal() : secret };
  }

  return {
    async list() {
      return listIn(await exec({ method: 'GET', path: '/webhooks' }), 'GET /webhooks');
    },
    async create(body) {
      const res = await exec({ method: 'POST', path: '/webhooks', body: checkWrite(body, true), secrets: secretsOf(body) });
      return pick(res, undefined, 'POST /webhooks');
    },
    async update(id, body) {
      checkId(id, 'webhook id');
      const res = await exec({ method: 'PUT', path: `/webhooks/${id}`, body: checkWrite(body, false), secrets: secretsOf(body) }, { idempotent: true });
      return pick(res, id, 'PUT /webhooks/{id}');
    },
    async delete(id) {
      checkId(id, 'webhook id');
      await exec({ method: 'DELETE', path: `/webhooks/${id}` });
    },
    async test(id) {
      checkId(id, 'webhook id');
      return asObject((await exec({ method: 'POST', path: `/webhooks/${id}/test` })) ?? {}, 'POST /webhooks/{id}/test');
    },
    async deliveriesPage(id, q) {
      checkId(id, 'webhook id');
      checkPageQuery(q, 'webhooks.deliveriesPage');
      const res = await exec({ method: 'GET', path: `/webhooks/${id}/deliveries`, query: { page: q.page, per_page: q.perPage, status: q.status } });
      return parsePage(res, ['deliveries'], schemas.WebhookDelivery, q, 'GET /webhooks/{id}/deliveries');
    },
  };
}

/** The secret a write sends, so that an error echoing the request cannot show it. */
function secretsOf(body: Partial<WebhookWrite>): Secret[] {
  if (body.secret === undefined) return [];
  return [body.secret instanceof Secret ? body.secret : new Secret(body.secret)];
}
