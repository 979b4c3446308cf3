import { z } from 'zod';
import type { CrmClient } from '../crm/index.js';
import type { Webhook } from '../crm/types.js';
import { ConfigError } from '../errors.js';
import { KNOWN_EVENTS } from './event-names.js';
import { generateWebhookSecret, readSecretsFile, writeSecretsFile } from './secrets-file.js';

export const RegisterWebhookOptions = z.object({
  url: z
    .string()
    .url('--url must be a full URL such as https://example.com/webhooks/crm')
    .max(2000)
    .refine((u) => !new URL(u).username && !new URL(u).password, '--url must not contain credentials'),
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
export async function registerWebhook(
  client: Pick<CrmClient, 'webhooks'>,
  raw: RegisterWebhookOptions,
  secretsFile: string,
): Promise<RegisterWebhookResult> {
  const parsed = RegisterWebhookOptions.safeParse(raw);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
  const opts = parsed.data;
  const protocol = new URL(opts.url).protocol;
  if (protocol !== 'https:' && !(protocol === 'http:' && opts.allowHttp)) {
    throw new ConfigError('The CRM only delivers to HTTPS URLs: pass an https:// --url (put the receiver behind a TLS proxy), or --allow-http for a local test CRM.');
  }
  const events = [...KNOWN_EVENTS];
  const stored = readSecretsFile(secretsFile);
  const hooks = await client.webhooks.list();
  const existing = hooks.find((h) => h.url === opts.url) ?? hooks.find((h) => h.name === opts.name);

  if (existing) {
    const current = stored.get(existing.id);
    const keep = current?.[0];
    const secret = keep && !opts.rotate ? keep : generateWebhookSecret();
    if (secret !== keep) {
      stored.set(existing.id, keep ? [secret, keep] : [secret]);
      writeSecretsFile(secretsFile, stored);
    }
    await client.webhooks.update(existing.id, { name: opts.name, url: opts.url, events, status: 'active', secret });
    return { id: existing.id, action: 'updated', newSecret: secret !== keep, secretsFile };
  }

  // Created inactive, activated once the receiver can know its secret (the id is known only now).
  const secret = generateWebhookSecret();
  const created = await client.webhooks.create({ name: opts.name, url: opts.url, events, status: 'inactive', secret });
  const id = created?.id ?? (await findByUrl(client, opts.url))?.id;
  if (id === undefined) throw new ConfigError(`The CRM did not return the new webhook for ${opts.url}; list webhooks in the CRM and run register again.`);
  stored.set(id, [secret]);
  writeSecretsFile(secretsFile, stored);
  await client.webhooks.update(id, { status: 'active' });
  return { id, action: 'created', newSecret: true, secretsFile };
}

async function findByUrl(client: Pick<CrmClient, 'webhooks'>, url: string): Promise<Webhook | undefined> {
  return (await client.webhooks.list()).find((h) => h.url === url);
}
