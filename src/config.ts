import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { checkBaseUrl } from './crm/transport.js';
import { ConfigError } from './errors.js';
import { readFileUpTo } from './read-file-up-to.js';
import { Secret } from './secret.js';
import { sizeBytes } from './size-bytes.js';
import { DEFAULT_CHECKPOINT_THRESHOLD, defaultSyncMemoryLimit, defaultSyncThreads, thisMachine, type Machine } from './worker/owner-memory-defaults.js';

/** A size as sizeBytes reads it: 256MB, 1.5GiB. */
const SIZE = /^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i;

/**
 * The only module that reads process.env. Layers: defaults, then a `.env` file (if present),
 * then the environment; validated with zod. Command-line flags are applied by the CLI on top.
 */
const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const positiveNumber = (name: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a positive number, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const positiveInteger = (name: string) => positiveNumber(name).refine((n) => n === undefined || Number.isInteger(n), { message: `${name} must be a whole number` });

const EnvSchema = z.object({
  CRM_BASE_URL: z.string().optional(),
  CRM_USERNAME: z.string().optional(),
  CRM_PASSWORD: z.string().optional(),
  CRM_TIMEZONE: z
    .string()
    .default('UTC')
    .refine(isValidTimeZone, { error: (issue) => `CRM_TIMEZONE "${String(issue.input)}" is not an IANA time zone; use for example "UTC" or "Europe/Berlin"` }),
  CRM_ALLOW_INSECURE_HTTP: bool,
  CRM_METHOD_OVERRIDE: bool,
  CRM_MAX_RPS: positiveNumber('CRM_MAX_RPS'),
  CRM_MAX_CONCURRENCY: positiveInteger('CRM_MAX_CONCURRENCY'),
  CRMSYNC_DB: z.string().default('./data/crm.duckdb'),
  CRMSYNC_LAKE: z.string().default('./data/lake'),
  CRMSYNC_CATALOG: z.string().optional(),
  CRMSYNC_PUBLISH_EVERY: z
    .string()
    .default('5m')
    .refine((v) => /^\s*(0|(\d+\s*[smh]\s*)+)$/i.test(v), 'CRMSYNC_PUBLISH_EVERY must be 0 (the lake moves only when a sync run ends) or a duration such as 30s, 5m or 1h'),
  CRMSYNC_DATA_DIR: z.string().default('./data'),
  CRMSYNC_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  CRMSYNC_SYNC_THREADS: positiveInteger('CRMSYNC_SYNC_THREADS'),
  CRMSYNC_SYNC_MEMORY_LIMIT: z
    .string()
    .regex(SIZE, 'CRMSYNC_SYNC_MEMORY_LIMIT must look like 256MB or 2GB')
    // Below it DuckDB cannot open and migrate the file, let alone load a page.
    // (A value the pattern refused is reported by it alone.)
    .refine((v) => !SIZE.test(v) || sizeBytes(v) >= 32e6, 'CRMSYNC_SYNC_MEMORY_LIMIT must be at least 32MB (unset, it is a sixteenth of the memory, 64MB to 128MB)')
    .optional(),
  CRMSYNC_SYNC_CHECKPOINT_THRESHOLD: z.string().regex(SIZE, 'CRMSYNC_SYNC_CHECKPOINT_THRESHOLD must look like 64MB or 1GB').default(DEFAULT_CHECKPOINT_THRESHOLD),
  CRMSYNC_SYNC_CONTACT_PAGES: z.enum(['raw', 'parsed'], { message: 'CRMSYNC_SYNC_CONTACT_PAGES must be raw (DuckDB parses contact pages, the default) or parsed (JavaScript does)' }).default('raw'),
  CRMSYNC_SYNC_TYPE_ASIDE: z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''], { message: 'CRMSYNC_SYNC_TYPE_ASIDE must be on (the default: type the next load on a second connection) or off' })
    .optional()
    .transform((v) => v === undefined || v === '' || ['1', 'true', 'yes', 'on'].includes(v)),
  CRMSYNC_WORKER_HEAP_GROWTH_PERCENT: z
    .string()
    .regex(/^\d+$/, "CRMSYNC_WORKER_HEAP_GROWTH_PERCENT must be a whole number of percent such as 50, or 0 for V8's own heap growth")
    .default('50')
    .transform(Number),
  TEMPORAL_ADDRESS: z
    .string()
    .optional()
    .refine((v) => !v || /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(v.trim()), {
      message: 'TEMPORAL_ADDRESS is malformed: it must be host:port with no scheme or path, for example 127.0.0.1:7233 or temporal:7233',
    }),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  CRMSYNC_EMBEDDED_IDLE: z
    .string()
    .default('10m')
    .refine((v) => /^\s*(0|(\d+\s*[smh]\s*)+)$/i.test(v), 'CRMSYNC_EMBEDDED_IDLE must be 0 (stop with each command) or a duration such as 90s, 10m or 1h'),
  XDG_CACHE_HOME: z.string().optional(),
  PATH: z.string().optional(),
  CRMSYNC_TASK_QUEUE: z.string().default('crmsync'),
  CRM_WEBHOOK_SECRET: z
    .string()
    .optional()
    .refine((v) => !v || v.length >= 16, 'CRM_WEBHOOK_SECRET must be at least 16 characters; generate one with `openssl rand -hex 32` or use `crmsync webhooks register`'),
  CRMSYNC_WEBHOOK_SECRETS_FILE: z.string().optional(),
  CRMSYNC_WEBHOOK_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  CRMSYNC_WEBHOOK_HOST: z.string().default('127.0.0.1'),
  CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS: positiveNumber('CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS'),
  CRMSYNC_WEBHOOK_MAX_CLOCK_SKEW_SECONDS: positiveNumber('CRMSYNC_WEBHOOK_MAX_CLOCK_SKEW_SECONDS'),
  CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS: positiveInteger('CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS'),
});

/**
 * The longest value each variable may have (characters; default MAX_CONFIG_VALUE): a value past it
 * is a mistake (a file pasted in, a runaway script), refused before anything reads it. The
 * message names the variable and the limit, never the value, which may be a secret.
 */
export const MAX_CONFIG_VALUE = 4096;
const MAX_VALUE_OF: Partial<Record<keyof z.infer<typeof EnvSchema>, number>> = {
  CRM_BASE_URL: 2048,
  CRM_USERNAME: 256,
  CRM_PASSWORD: 1024,
  CRM_WEBHOOK_SECRET: 1024,
  // The system's own search path: Linux bounds one variable at 128 KiB.
  PATH: 131_072,
};
/** The `.env` file holds a few variables: a larger one is not read. */
export const MAX_ENV_FILE_BYTES = 1024 * 1024;

export interface CrmConfig {
  baseUrl: string | undefined;
  username: string | undefined;
  password: Secret | undefined;
  timezone: string;
  allowInsecureHttp: boolean;
  methodOverride: boolean;
  maxRps: number | undefined;
  maxConcurrency: number | undefined;
}

export interface Config {
  crm: CrmConfig;
  dbPath: string;
  lakePath: string;
  /** The catalog DuckDB file readers open (views over the lake); default `<lake>/catalog.duckdb`. */
  catalogPath: string;
  /** How often the webhook applier publishes to the lake (a sync publishes at its end and, during a contact scan, each finished id range); 0: only a sync run's end publishes. */
  publishEveryMs: number;
  dataDir: string;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
  /** DuckDB memory limit of the warehouse owner (larger merges spill to disk); default derived from the machine (defaultSyncMemoryLimit). */
  syncMemoryLimit: string;
  /** DuckDB threads of the warehouse owner; default one per 128MB of its limit, at most one per core (defaultSyncThreads). */
  syncThreads: number;
  /** The write-ahead log size after which the owner checkpoints, under a lowered memory limit (default 128MB): rows written since stay in DuckDB's memory. */
  syncCheckpointThreshold: string;
  /** How a contact scan's pages reach the warehouse: `raw` bodies DuckDB parses (default), or `parsed` in JavaScript. */
  syncContactPages: 'raw' | 'parsed';
  /** CRMSYNC_SYNC_TYPE_ASIDE: a contact scan types its next load on a second DuckDB connection while one loads (default true). */
  syncTypeAside: boolean;
  /** The worker's V8 heap grows this much past its live set before a full collection; 0: V8's own factor (limitHeapGrowth). */
  workerHeapGrowthPercent: number;
  temporal: {
    address: string | undefined;
    namespace: string;
    cliPath: string | undefined;
    taskQueue: string;
    cliCacheRoot?: string | undefined;
    searchPath?: string;
    /** How long the embedded dev server outlives the last command that used it; 0: it stops with the command that started it. */
    embeddedIdleMs?: number;
  };
  webhooks: {
    secret: Secret | undefined;
    secretsFile: string | undefined;
    port: number;
    host: string;
    /** Event timestamps older than this (hours) or further ahead than the skew (seconds) are refused; undefined: the receiver's defaults. */
    maxEventAgeHours: number | undefined;
    maxClockSkewSeconds: number | undefined;
    maxConnectionsPerAddress: number | undefined;
  };
}

/** `machine`: what the owner's memory defaults are derived from (tests pass one). */
export function loadConfig(env: NodeJS.ProcessEnv = readEnv(), machine: Machine = thisMachine()): Config {
  const tooLong = Object.keys(EnvSchema.shape).flatMap((key) => {
    const value = env[key];
    const max = MAX_VALUE_OF[key as keyof typeof MAX_VALUE_OF] ?? MAX_CONFIG_VALUE;
    return typeof value === 'string' && value.length > max ? [`  ${key}: is ${value.length} characters, more than the ${max} it may have; set it to the value itself`] : [];
  });
  if (tooLong.length > 0) throw new ConfigError(`Invalid configuration; fix these environment variables:\n${tooLong.join('\n')}`);
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration; fix these environment variables:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const syncMemoryLimit = e.CRMSYNC_SYNC_MEMORY_LIMIT ?? defaultSyncMemoryLimit(machine);
  return {
    crm: {
      baseUrl: e.CRM_BASE_URL || undefined,
      username: e.CRM_USERNAME || undefined,
      password: e.CRM_PASSWORD ? new Secret(e.CRM_PASSWORD) : undefined,
      timezone: e.CRM_TIMEZONE,
      allowInsecureHttp: e.CRM_ALLOW_INSECURE_HTTP,
      methodOverride: e.CRM_METHOD_OVERRIDE,
      maxRps: e.CRM_MAX_RPS,
      maxConcurrency: e.CRM_MAX_CONCURRENCY,
    },
    dbPath: e.CRMSYNC_DB,
    lakePath: e.CRMSYNC_LAKE,
    // Same default as the publisher's (CATALOG_FILE in src/warehouse/lake-layout.ts; a test keeps them equal).
    catalogPath: e.CRMSYNC_CATALOG || join(e.CRMSYNC_LAKE, 'catalog.duckdb'),
    publishEveryMs: idleMs(e.CRMSYNC_PUBLISH_EVERY),
    dataDir: e.CRMSYNC_DATA_DIR,
    logLevel: e.CRMSYNC_LOG_LEVEL,
    syncMemoryLimit,
    syncThreads: e.CRMSYNC_SYNC_THREADS ?? defaultSyncThreads(syncMemoryLimit, machine),
    syncCheckpointThreshold: e.CRMSYNC_SYNC_CHECKPOINT_THRESHOLD,
    syncContactPages: e.CRMSYNC_SYNC_CONTACT_PAGES,
    syncTypeAside: e.CRMSYNC_SYNC_TYPE_ASIDE,
    workerHeapGrowthPercent: e.CRMSYNC_WORKER_HEAP_GROWTH_PERCENT,
    temporal: {
      address: e.TEMPORAL_ADDRESS?.trim() || undefined,
      namespace: e.TEMPORAL_NAMESPACE,
      cliPath: e.TEMPORAL_CLI_PATH || undefined,
      taskQueue: e.CRMSYNC_TASK_QUEUE,
      cliCacheRoot: e.XDG_CACHE_HOME || undefined,
      searchPath: e.PATH ?? '',
      embeddedIdleMs: idleMs(e.CRMSYNC_EMBEDDED_IDLE),
    },
    webhooks: {
      secret: e.CRM_WEBHOOK_SECRET ? new Secret(e.CRM_WEBHOOK_SECRET) : undefined,
      secretsFile: e.CRMSYNC_WEBHOOK_SECRETS_FILE || undefined,
      port: e.CRMSYNC_WEBHOOK_PORT,
      host: e.CRMSYNC_WEBHOOK_HOST,
      maxEventAgeHours: e.CRMSYNC_WEBHOOK_MAX_EVENT_AGE_HOURS,
      maxClockSkewSeconds: e.CRMSYNC_WEBHOOK_MAX_CLOCK_SKEW_SECONDS,
      maxConnectionsPerAddress: e.CRMSYNC_WEBHOOK_MAX_CONNECTIONS_PER_ADDRESS,
    },
  };
}

/**
 * Throws a ConfigError naming the variables to set when the CRM connection is incomplete, and the
 * client's own refusal of an unsafe CRM_BASE_URL (plain http to a host other than loopback without
 * CRM_ALLOW_INSECURE_HTTP, credentials or a query in it): every command that talks to the CRM, or
 * has a worker do so, calls this first, so none gets past the check by leaving the requests to a
 * worker.
 */
export function requireCrm(config: Config): Required<Pick<CrmConfig, 'baseUrl' | 'username' | 'password'>> & CrmConfig {
  const missing = (['CRM_BASE_URL', 'CRM_USERNAME', 'CRM_PASSWORD'] as const).filter(
    (k) => !{ CRM_BASE_URL: config.crm.baseUrl, CRM_USERNAME: config.crm.username, CRM_PASSWORD: config.crm.password }[k],
  );
  if (missing.length > 0) {
    throw new ConfigError(`The CRM connection is not configured: set ${missing.join(', ')} (in the environment or a .env file), or run \`crmsync demo\` to use the built-in simulator.`);
  }
  checkBaseUrl(config.crm.baseUrl!, config.crm.allowInsecureHttp);
  return config.crm as Required<Pick<CrmConfig, 'baseUrl' | 'username' | 'password'>> & CrmConfig;
}

/**
 * `env` with the variables of the `.env` file added (`file`, default in the working directory);
 * values already in `env` win over the file. A file over MAX_ENV_FILE_BYTES is refused unread.
 */
export function readEnv(file = '.env', env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  let bytes: Buffer | null;
  try {
    bytes = readFileUpTo(file, MAX_ENV_FILE_BYTES);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return env;
    throw new ConfigError(`The ${file} file cannot be read (${(err as { code?: string }).code ?? 'error'}); fix its permissions, or remove it and set the variables in the environment.`);
  }
  if (bytes === null) throw new ConfigError(`The ${file} file is larger than 1 MiB; it should hold only crmsync's variables (CRM_BASE_URL=... one a line).`);
  for (const [key, value] of Object.entries(parseEnv(bytes.toString('utf8')))) if (env[key] === undefined) env[key] = value;
  return env;
}

const IDLE_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };

function idleMs(value: string): number {
  let total = 0;
  for (const m of value.toLowerCase().matchAll(/(\d+)\s*([smh])/g)) total += Number(m[1]) * (IDLE_UNITS[m[2] as string] ?? 0);
  return total;
}

function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
