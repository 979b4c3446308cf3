import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import type { WebhookApplyTotals } from '../../workflows/webhook-apply-types.js';
import { loadConfig, requireCrm, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { ConfigError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { quietTemporalRuntime } from '../sync/quiet-temporal-runtime.js';
import { withTemporal } from '../temporal/connect.js';
import { taskQueues } from '../temporal/task-queues.js';
import { registerWebhook } from '../webhooks/register-webhook.js';
import { createSecretResolver } from '../webhooks/secret-resolver.js';
import { defaultSecretsFile } from '../webhooks/secrets-file.js';
import type { Spool } from '../webhooks/spool.js';
import { withWebhookService } from '../webhooks/webhook-service.js';
import { webhookSpoolDir } from '../webhooks/webhook-spool-dir.js';
import { DEFAULT_EVENT_TIME_WINDOW } from '../webhooks/check-event-time.js';
import { DeadLettersOptions, runDeadLetters } from './webhook-dead-letters.js';
import { DEFAULT_WEBHOOK_PATH } from '../webhooks/webhook-server.js';
import { withInProcessWorkers } from '../worker/with-in-process-workers.js';

const ServeOptions = z.object({
  port: z.coerce.number({ error: '--port must be a number' }).int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  path: z
    .string()
    .regex(/^\/[\w./-]*$/, '--path must start with / (e.g. /webhooks/crm)')
    .default(DEFAULT_WEBHOOK_PATH),
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
  const webhooks = program.command('webhooks').description("Receive the CRM's signed webhook events, or register the receiver with the CRM");
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
  if (opts.apply) requireCrm(config);
  const secrets = createSecretResolver({ secret: config.webhooks.secret, secretsFile, fileRequired: fileGiven, logger });
  const abort = new AbortController();
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping the webhook receiver');
    abort.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const receive = async (apply?: { status: () => WebhookApplyTotals | undefined; follow: (spool: Spool) => Promise<void> }): Promise<void> =>
    withWebhookService(
      {
        spoolDir: webhookSpoolDir(config),
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
        ...(apply ? { appliedStatus: () => describeApplied(apply.status()) } : {}),
      },
      async (service) => {
        process.stdout.write(
          `crmsync webhooks: receiving on ${service.url}\n  health ${new URL('/healthz', service.url).href}, readiness ${new URL('/readyz', service.url).href}, metrics ${new URL('/metrics', service.url).href}\n  ${apply ? 'applying to the warehouse through the warehouse worker' : 'spooling only (--no-apply)'}; stop with Ctrl-C\n`,
        );
        logger.info({ url: service.url, secretSources: secrets.describe(), apply: Boolean(apply) }, 'webhook receiver started');
        const following = apply?.follow(service.spool);
        await new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
        await following;
      },
    );
  try {
    if (!opts.apply) return await receive();
    quietTemporalRuntime(config.logLevel, logger);
    const embedded = !config.temporal.address;
    await withTemporal(
      config,
      async (t) => {
        const run = async (): Promise<void> => {
          const handle = await startWebhookApply(t.client, taskQueues(config).main);
          let status: WebhookApplyTotals | undefined;
          // The apply workflow says how far it got: the spool prunes up to there, readiness shows the lag.
          const follow = async (spool: Spool): Promise<void> => {
            while (!abort.signal.aborted) {
              try {
                status = await handle.query<WebhookApplyTotals>('webhookApplyStatus');
                await spool.markApplied(status.appliedSeq);
              } catch (err) {
                logger.debug({ err }, 'asking the webhook apply workflow for its status failed; asking again');
              }
              await sleep(APPLY_STATUS_EVERY_MS, undefined, { signal: abort.signal }).catch(() => undefined);
            }
          };
          await receive({ status: () => status, follow });
        };
        if (!embedded || !t.nativeConnection) return await run();
        return await withInProcessWorkers({ config, logger, client: t.client, nativeConnection: t.nativeConnection, namespace: t.namespace }, run);
      },
      { worker: embedded },
    );
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

const APPLY_STATUS_EVERY_MS = 2_000;

/** The one apply workflow of this task queue: started once, joined by every later receiver. */
export async function startWebhookApply(client: Client, taskQueue: string): Promise<WorkflowHandle> {
  return await client.workflow.start('webhookApplyWorkflow', {
    taskQueue,
    workflowId: `crmsync-webhook-apply-${taskQueue}`,
    args: [{}],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

function describeApplied(s: WebhookApplyTotals | undefined) {
  return s ? { appliedSeq: s.appliedSeq, deadLettered: s.deadLettered, lastError: null, consecutiveFailures: 0 } : undefined;
}
