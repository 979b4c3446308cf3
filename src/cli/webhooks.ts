import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { ConfigError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { withWarehouse } from '../warehouse/index.js';
import { createClientRefetcher } from '../webhooks/client-refetcher.js';
import { registerWebhook } from '../webhooks/register-webhook.js';
import { createSecretResolver } from '../webhooks/secret-resolver.js';
import { defaultSecretsFile } from '../webhooks/secrets-file.js';
import { withWebhookService } from '../webhooks/webhook-service.js';
import { DEFAULT_EVENT_TIME_WINDOW } from '../webhooks/check-event-time.js';
import { DeadLettersOptions, runDeadLetters } from './webhook-dead-letters.js';
import { DEFAULT_WEBHOOK_PATH } from '../webhooks/webhook-server.js';

const ServeOptions = z.object({
  port: z.coerce.number({ error: '--port must be a number' }).int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  path: z.string().regex(/^\/[\w./-]*$/, '--path must start with / (e.g. /webhooks/crm)').default(DEFAULT_WEBHOOK_PATH),
  apply: z.boolean().default(true),
  maxBodyKb: z.coerce.number({ error: '--max-body-kb must be a number' }).int().min(1).max(16_384).default(1024),
});

const RegisterOptions = z.object({
  url: z.string({ error: '--url is required, e.g. --url https://crm-hooks.example.com/webhooks/crm' }),
  name: z.string().optional(),
  rotate: z.boolean().default(false),
  allowHttp: z.boolean().default(false),
});

function parse<T>(schema: z.ZodType<T>, raw: unknown, cmd: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`webhooks ${cmd}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

/** `crmsync webhooks serve` and `crmsync webhooks register --url https://...`. */
export function registerWebhooksCommand(program: Command): void {
  const webhooks = program.command('webhooks').description('Receive the CRM\'s signed webhook events, or register the receiver with the CRM');
  webhooks
    .command('serve')
    .description('Run the ingest endpoint: verify, spool durably (fsync before 2xx), apply to the warehouse')
    .option('--port <port>', 'port to listen on (default CRMSYNC_WEBHOOK_PORT, 8787)')
    .option('--host <host>', 'address to listen on (default CRMSYNC_WEBHOOK_HOST, 127.0.0.1)')
    .option('--path <path>', 'path deliveries are posted to', DEFAULT_WEBHOOK_PATH)
    .option('--no-apply', 'only receive and spool; do not write to the warehouse')
    .option('--max-body-kb <kb>', 'largest accepted body in KiB', '1024')
    .action(async (raw: unknown) => {
      const opts = parse(ServeOptions, raw, 'serve');
      const config = loadConfig();
      await serveWebhooks(config, opts, createLogger(config.logLevel, { cmd: 'webhooks serve' }));
    });
  webhooks
    .command('register')
    .description('Create or update the CRM webhook for --url with every event and a generated secret, stored for the receiver (mode 0600)')
    .requiredOption('--url <url>', 'public HTTPS URL of the receiver, e.g. https://hooks.example.com/webhooks/crm')
    .option('--name <name>', 'webhook name in the CRM', 'crmsync')
    .option('--rotate', 'generate a new secret even if one is stored (the previous one stays valid until the next rotation)')
    .option('--allow-http', 'allow an http:// URL (a local or test CRM only)')
    .action(async (raw: unknown) => {
      const opts = parse(RegisterOptions, raw, 'register');
      const config = loadConfig();
      const secretsFile = config.webhooks.secretsFile ?? defaultSecretsFile(config.dataDir);
      const client = crmClientFromConfig(config, { logger: createLogger(config.logLevel, { cmd: 'webhooks register' }) });
      try {
        const r = await registerWebhook(client, { url: opts.url, rotate: opts.rotate, allowHttp: opts.allowHttp, ...(opts.name ? { name: opts.name } : {}) }, secretsFile);
        process.stdout.write(
          `Webhook ${r.id} ${r.action} for ${opts.url} with all events; ${r.newSecret ? 'a new secret is stored' : 'the stored secret stays'} in ${r.secretsFile} (mode 0600).\n` +
            `Run \`crmsync webhooks serve\` with CRMSYNC_WEBHOOK_SECRETS_FILE=${r.secretsFile} (the default when unset).\n`,
        );
      } finally {
        await client.close();
      }
    });
  webhooks
    .command('dead-letters')
    .description('List deliveries the applier set aside (unreadable, refused by the CRM, failing alone); --retry applies them again')
    .option('--retry', 'apply them again (refetching from the CRM); those that apply are resolved')
    .option('--limit <n>', 'at most this many, oldest first', '100')
    .option('--json', 'one JSON object per line')
    .action(async (raw: unknown) => {
      const opts = parse(DeadLettersOptions, raw, 'dead-letters');
      const config = loadConfig();
      const left = await runDeadLetters(config, opts, createLogger(config.logLevel, { cmd: 'webhooks dead-letters' }), (s) => process.stdout.write(s));
      if (opts.retry && left > 0) process.exitCode = 1;
    });
}

export async function serveWebhooks(config: Config, opts: z.infer<typeof ServeOptions>, logger: Logger): Promise<void> {
  const secretsFile = config.webhooks.secretsFile ?? defaultSecretsFile(config.dataDir);
  const fileGiven = config.webhooks.secretsFile !== undefined;
  if (!config.webhooks.secret && !fileGiven && !existsSync(secretsFile)) {
    throw new ConfigError(`No webhook secret: set CRM_WEBHOOK_SECRET, or run \`crmsync webhooks register --url https://...\` (writes ${secretsFile}).`);
  }
  const secrets = createSecretResolver({ secret: config.webhooks.secret, secretsFile, fileRequired: fileGiven, logger });
  const client = opts.apply ? crmClientFromConfig(config, { logger }) : undefined;
  const abort = new AbortController();
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping the webhook receiver');
    abort.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await withWebhookService(
      {
        spoolDir: join(config.dataDir, 'webhook-spool'),
        host: opts.host ?? config.webhooks.host,
        port: opts.port ?? config.webhooks.port,
        path: opts.path,
        secrets,
        logger,
        maxBodyBytes: opts.maxBodyKb * 1024,
        eventTimeWindow: {
          maxAgeMs: (config.webhooks.maxEventAgeHours ?? DEFAULT_EVENT_TIME_WINDOW.maxAgeMs / 3600_000) * 3600_000,
          maxFutureMs: (config.webhooks.maxClockSkewSeconds ?? DEFAULT_EVENT_TIME_WINDOW.maxFutureMs / 1000) * 1000,
        },
        ...(config.webhooks.maxConnectionsPerAddress ? { limits: { maxPerAddress: config.webhooks.maxConnectionsPerAddress } } : {}),
        ...(client
          ? {
              apply: {
                refetcher: createClientRefetcher(client),
                concurrency: config.crm.maxConcurrency ?? 8,
                withWarehouse: (fn) => withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, catalogPath: config.catalogPath, write: true, logger, siteTimeZone: config.crm.timezone }, fn),
                publishEveryMs: config.publishEveryMs,
              },
            }
          : {}),
      },
      async (service) => {
        process.stdout.write(`crmsync webhooks: receiving on ${service.url}\n  health ${new URL('/healthz', service.url).href}, readiness ${new URL('/readyz', service.url).href}, metrics ${new URL('/metrics', service.url).href}\n  ${client ? 'applying to the warehouse' : 'spooling only (--no-apply)'}; stop with Ctrl-C\n`);
        logger.info({ url: service.url, secretSources: secrets.describe(), apply: Boolean(client) }, 'webhook receiver started');
        await new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    );
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await client?.close();
  }
}
