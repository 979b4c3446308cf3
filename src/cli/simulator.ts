import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { REAL_DEPLOYMENT_LATENCY, startSimulator, type FaultOptions } from '../simulator/index.js';
import { describeOptionIssues } from './option-issues.js';

/** Used when CRM_USERNAME / CRM_PASSWORD are unset, so that one environment drives client and simulator. */
export const SIMULATOR_DEFAULT_USERNAME = 'crmsync-admin';
export const SIMULATOR_DEFAULT_PASSWORD = 'crmsync-dev-password';

const FaultsSchema = z
  .object({
    errorRate: z.number().min(0).max(1),
    rateLimitRps: z.number().positive(),
    latencyMs: z.union([
      z.object({ min: z.number().min(0), max: z.number().min(0) }),
      z.object({ distribution: z.literal('exponential'), mean: z.number().min(0), max: z.number().min(0).optional() }),
      z.object({ byPerPage: z.array(z.object({ perPage: z.number().min(1), min: z.number().min(0), max: z.number().min(0) }).strict()).min(1) }),
    ]),
    truncateRate: z.number().min(0).max(1),
    dropRate: z.number().min(0).max(1),
    slowReportsMs: z.number().min(0),
    deadlockRate: z.number().min(0).max(1),
  })
  .partial()
  .strict();

const OptionsSchema = z.object({
  contacts: z.coerce.number().int().min(0).max(5_000_000),
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  seed: z.coerce.number().int(),
  real: z.boolean(),
  admin: z.boolean(),
  timezone: z.string().optional(),
  faults: z.string().optional(),
  webhookTimeScale: z.coerce.number().positive(),
  allowHttpWebhooks: z.boolean(),
  unavailable: z.array(z.string()),
  perPageCap: z.coerce.number().int().min(1).optional(),
});

/** `--faults` as JSON (`{"errorRate":0.05}`) or `errorRate=0.05,rateLimitRps=20,latency=5-50`. */
export function parseFaults(text: string): FaultOptions {
  let raw: unknown;
  if (text.trim().startsWith('{')) {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ConfigError('--faults is not valid JSON; use e.g. --faults \'{"errorRate":0.05}\' or --faults errorRate=0.05,rateLimitRps=20');
    }
  } else {
    const obj: Record<string, unknown> = {};
    for (const part of text.split(',').filter(Boolean)) {
      const [k, v = ''] = part.split('=');
      if ((k === 'latency' || k === 'latencyMs') && v === 'real') {
        obj.latencyMs = { byPerPage: REAL_DEPLOYMENT_LATENCY };
      } else if (k === 'latency' || k === 'latencyMs') {
        const [min, max = min] = v.split('-').map(Number);
        obj.latencyMs = { min, max };
      } else obj[k?.trim() ?? ''] = Number(v);
    }
    raw = obj;
  }
  const parsed = FaultsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      `--faults: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(faults)'} ${i.message}`).join('; ')}; known keys: errorRate, rateLimitRps, latency=MIN-MAX or latency=real (the captured deployment's, by page size), truncateRate, dropRate, slowReportsMs, deadlockRate (real mode)`,
    );
  }
  return parsed.data as FaultOptions;
}

export function registerSimulatorCommand(program: Command): void {
  program
    .command('simulator')
    .description('Serve the CRM simulator (seeded data, webhooks, faults) until interrupted.')
    .option('--contacts <n>', 'seeded contacts', '300')
    .option('--port <p>', 'port (0 picks a free one)', '0')
    .option('--host <h>', 'interface to bind', '127.0.0.1')
    .option('--seed <s>', 'seed for data and faults', '42')
    .option('--real', 'reproduce the quirks of the real deployment (fluentcrm-2.9)', false)
    .option('--admin', 'serve the ground-truth endpoint under /__simulator', false)
    .option('--timezone <tz>', 'site time zone for zone-less timestamps (default CRM_TIMEZONE)')
    .option('--faults <spec>', 'faults: JSON or errorRate=0.05,rateLimitRps=20,latency=5-50,truncateRate=0.01,dropRate=0.01,slowReportsMs=500,deadlockRate=0.02 (real mode)')
    .option('--webhook-time-scale <x>', 'multiply webhook retry intervals and timeout by x', '1')
    .option('--allow-http-webhooks', 'accept http:// webhook URLs (local receivers)', false)
    .option('--unavailable <prefix>', 'a route prefix the CRM lacks, e.g. /reports (404 rest_no_route; repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--per-page-cap <n>', 'serve at most n rows per page whatever per_page asks (as some servers do)')
    .action(async (raw: Record<string, unknown>) => {
      const parsed = OptionsSchema.safeParse(raw);
      if (!parsed.success) {
        throw new ConfigError(`Invalid simulator options: ${describeOptionIssues(parsed.error.issues, raw)}`);
      }
      const o = parsed.data;
      const config = loadConfig();
      const sim = await startSimulator({
        contacts: o.contacts,
        port: o.port,
        host: o.host,
        seed: o.seed,
        mode: o.real ? 'real' : 'spec',
        admin: o.admin,
        timezone: o.timezone ?? config.crm.timezone,
        webhookTimeScale: o.webhookTimeScale,
        allowHttpWebhookUrls: o.allowHttpWebhooks,
        unavailable: o.unavailable,
        credentials: {
          username: config.crm.username ?? SIMULATOR_DEFAULT_USERNAME,
          password: config.crm.password?.reveal() ?? SIMULATOR_DEFAULT_PASSWORD,
        },
        ...(o.faults ? { faults: parseFaults(o.faults) } : {}),
        ...(o.perPageCap !== undefined ? { perPageCap: o.perPageCap } : {}),
      });
      // The default is a published demo password, so it is printed; one chosen with CRM_PASSWORD is not echoed.
      const password = config.crm.password ? '(the CRM_PASSWORD you set)' : `${SIMULATOR_DEFAULT_PASSWORD}  (the default; set CRM_PASSWORD to choose one)`;
      process.stdout.write(`${sim.baseUrl}\n`);
      process.stderr.write(
        `crmsync simulator: ${o.contacts} contacts, ${o.real ? 'real-deployment' : 'spec'} mode, seed ${o.seed}\n` +
          `accepts these credentials (put them in .env or the environment of crmsync):\n` +
          `  CRM_BASE_URL=${sim.baseUrl}\n  CRM_USERNAME=${sim.credentials.username}\n  CRM_PASSWORD=${password}\n` +
          (sim.adminUrl ? `  ground truth: GET ${sim.adminUrl}\n` : '') +
          '  Ctrl-C to stop\n',
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sim.close();
    });
}
