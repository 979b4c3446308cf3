import { z } from 'zod';
import { CrmError, NotFoundError, ValidationError, type CrmClient } from '../crm/index.js';
import type { Webhook } from '../crm/types.js';
import { ConfigError, CrmsyncError } from '../errors.js';
import { KNOWN_EVENTS } from './event-names.js';
import { FRESH_WITHOUT_WEBHOOKS, NoOutboundWebhooksError } from './no-outbound-webhooks-error.js';
import { generateWebhookSecret, readSecretsFile, writeSecretsFile } from './secrets-file.js';

export const RegisterWebhookOptions = z.object({
  // Checks go on after a failed one, so none of them may parse a URL that does not parse.
  url: z
    .string()
    .max(2000)
    .refine((u) => URL.canParse(u), '--url must be a full URL such as https://example.com/webhooks/crm')
    .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), '--url must not contain credentials'),
  name: z.string().min(1).max(190).default('crmsync'),
  rotate: z.boolean().default(false),
  allowHttp: z.boolean().default(false),
});
export type RegisterWebhookOptions = z.input<typeof RegisterWebhookOptions>;

export interface RegisterWebhookResult {
  id: number;
  action: 'created' | 'updated';
  /** True when a new secret was generated (a new webhook, or --rotate). */
  newSecret: boolean;
  secretsFile: string;
}

/**
 * Creates or updates (matched by URL, then by name) the CRM webhook with every event, and stores
 * its secret where the receiver reads it. Idempotent: a second run reuses the stored secret unless
 * `rotate` is set. A rotation writes the new secret to the file (keeping the previous one as
 * second) before the CRM starts signing with it, so no delivery is refused in between.
 */
export async function registerWebhook(client: Pick<CrmClient, 'webhooks'>, raw: RegisterWebhookOptions, secretsFile: string): Promise<RegisterWebhookResult> {
  const parsed = RegisterWebhookOptions.safeParse(raw);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
  const opts = parsed.data;
  const protocol = new URL(opts.url).protocol;
  if (protocol !== 'https:' && !(protocol === 'http:' && opts.allowHttp)) {
    throw new ConfigError('The CRM only delivers to HTTPS URLs: pass an https:// --url (put the receiver behind a TLS proxy), or --allow-http for a local test CRM.');
  }
  const events = [...KNOWN_EVENTS];
  const stored = readSecretsFile(secretsFile);
  const hooks = await routeOrNoWebhooks(() => client.webhooks.list());
  const existing = hooks.find((h) => h.url === opts.url) ?? hooks.find((h) => h.name === opts.name);

  if (existing) {
    // An incoming webhook of the same name (left by an earlier attempt): writing a secret into it
    // would not make the CRM call us, so it is left alone.
    if (existing.url !== opts.url && isIncoming(existing)) throw incomingRefused(existing, opts.url, false);
    const current = stored.get(existing.id);
    const keep = current?.[0];
    const secret = keep && !opts.rotate ? keep : generateWebhookSecret();
    if (secret !== keep) {
      stored.set(existing.id, keep ? [secret, keep] : [secret]);
      writeSecretsFile(secretsFile, stored);
    }
    try {
      await client.webhooks.update(existing.id, { name: opts.name, url: opts.url, events, status: 'active', secret });
    } catch (e) {
      // Refused (4xx), the update changed nothing in the CRM: the file goes back to what it held, or
      // a webhook it did not list (verified with CRM_WEBHOOK_SECRET) would be refused from now on.
      // After an answer that may hide an applied update (5xx, network) the new secret stays.
      if (secret !== keep && e instanceof CrmError && e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
        if (current) stored.set(existing.id, current);
        else stored.delete(existing.id);
        writeSecretsFile(secretsFile, stored);
      }
      eventsRefused(e);
    }
    const after = (await client.webhooks.list()).find((h) => h.id === existing.id);
    if (after && after.url !== opts.url) {
      throw new NoOutboundWebhooksError(
        `The CRM kept webhook ${existing.id} at ${describeUrl(after.url)} instead of ${opts.url}, so it would deliver nothing to crmsync; point it at the receiver in the CRM, or delete it and run register again. ${FRESH_WITHOUT_WEBHOOKS}.`,
      );
    }
    return { id: existing.id, action: 'updated', newSecret: secret !== keep, secretsFile };
  }

  // Created inactive, activated once the receiver can know its secret (the id is known only now).
  const secret = generateWebhookSecret();
  const created = await routeOrNoWebhooks(() => client.webhooks.create({ name: opts.name, url: opts.url, events, status: 'inactive', secret }).catch(eventsRefused));
  const id = created?.id ?? (await findByUrl(client, opts.url))?.id;
  if (id === undefined) throw new ConfigError(`The CRM did not return the new webhook for ${opts.url}; list webhooks in the CRM and run register again.`);
  // What the CRM stored decides, not what it answered: the free plugin stores its own URL instead.
  const kept = (await client.webhooks.list()).find((h) => h.id === id) ?? created;
  if (!kept || kept.url !== opts.url) {
    const undone = await client.webhooks.delete(id).then(
      () => true,
      () => false,
    );
    throw incomingRefused({ id, url: kept?.url ?? null }, opts.url, true, undone);
  }
  stored.set(id, [secret]);
  writeSecretsFile(secretsFile, stored);
  await client.webhooks.update(id, { status: 'active' });
  return { id, action: 'created', newSecret: true, secretsFile };
}

/**
 * The interface's 400 `invalid_webhook_event`: the CRM knows fewer events than the interface
 * names, and crmsync registers them all, so no option of ours fixes it. Said so, with the server's
 * words (which name the event), instead of the client's "fix the request parameters".
 */
function eventsRefused(e: unknown): never {
  if (e instanceof ValidationError && /invalid_webhook_event/.test(e.message)) {
    throw new CrmsyncError(
      'CRM_WEBHOOK_EVENT_REFUSED',
      `The CRM refused an event crmsync subscribes to (400 invalid_webhook_event: ${e.serverMessage ?? 'no message'}): it knows fewer events than its interface names, so no webhook was registered; please report the CRM's version. ${FRESH_WITHOUT_WEBHOOKS}.`,
      { cause: e },
    );
  }
  throw e;
}

/** A `/webhooks` route the CRM does not have means it has no webhooks at all. */
async function routeOrNoWebhooks<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NotFoundError && e.routeMissing) {
      throw new NoOutboundWebhooksError(`This CRM has no webhook endpoint (${e.route ?? '/webhooks'} answered 404 rest_no_route), so it sends no outbound webhooks. ${FRESH_WITHOUT_WEBHOOKS}.`, {
        cause: e,
      });
    }
    throw e;
  }
}

/** The real deployment's webhooks carry object_type/key/value and point at the site itself. */
function isIncoming(h: Webhook): boolean {
  return h.raw.object_type === 'webhook' || 'key' in h.raw || /[?&]fluentcrm=1\b/.test(h.url ?? '');
}

function incomingRefused(h: { id: number; url: string | null }, ours: string, created: boolean, undone = false): NoOutboundWebhooksError {
  const what = created
    ? undone
      ? `POST /webhooks created an incoming webhook (${h.id}) that stores ${describeUrl(h.url)} instead of ${ours}; crmsync deleted it again`
      : `POST /webhooks created an incoming webhook (${h.id}) that stores ${describeUrl(h.url)} instead of ${ours}, and deleting it failed: delete webhook ${h.id} in the CRM (it is a live contact-creation URL)`
    : `webhook ${h.id} named like ours is an incoming webhook at ${describeUrl(h.url)}; crmsync left it unchanged (delete it in the CRM if an earlier register created it)`;
  return new NoOutboundWebhooksError(`This CRM sends no outbound webhooks (the free FluentCRM plugin only has incoming ones): ${what}. ${FRESH_WITHOUT_WEBHOOKS}.`);
}

/** A stored URL for a message: the site's own address without its query (the hash is a credential). */
function describeUrl(url: string | null): string {
  if (!url) return 'no URL';
  try {
    const u = new URL(url);
    return u.search ? `the CRM's own address ${u.origin}${u.pathname}?…` : `${u.origin}${u.pathname}`;
  } catch {
    return 'an unparseable URL';
  }
}

async function findByUrl(client: Pick<CrmClient, 'webhooks'>, url: string): Promise<Webhook | undefined> {
  return (await client.webhooks.list()).find((h) => h.url === url);
}
