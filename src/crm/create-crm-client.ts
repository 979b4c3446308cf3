import type { Config } from '../config.js';
import { requireCrm } from '../config.js';
import { silentLogger, type Logger } from '../logger.js';
import { Secret } from '../secret.js';
import type { ClientContext } from './client-context.js';
import { CrmArgumentError, ForbiddenError, NotFoundError } from './errors.js';
import { paginate, type PaginateOptions } from './paginate.js';
import { sharedRateLimiter, type RateLimiter } from './rate-limiter.js';
import { createExecutor, type ClientStats, type RetryPolicy } from './request-executor.js';
import { createCampaignsApi, type CampaignsApi } from './resources/campaigns.js';
import { createCompaniesApi, type CompaniesApi } from './resources/companies.js';
import { createContactsApi, type ContactsApi } from './resources/contacts.js';
import { createCustomFieldsApi, type CustomFieldsApi } from './resources/custom-fields.js';
import { createSequencesApi, createTemplatesApi, type SequencesApi, type TemplatesApi } from './resources/emails.js';
import { createFunnelsApi, type FunnelsApi } from './resources/funnels.js';
import { createReportsApi, type ReportsApi } from './resources/reports.js';
import { createListsApi, createTagsApi, type TaxonomyApi } from './resources/taxonomies.js';
import { createWebhooksApi, type WebhooksApi } from './resources/webhooks.js';
import { buildSchemas } from './schemas/index.js';
import { createTimestampNormalizer } from './timestamps.js';
import { createTransport, type TransportTimeouts } from './transport.js';
import type { List, Page, Tag } from './types.js';

export interface CrmClientOptions {
  baseUrl: string;
  username: string;
  password: Secret | string;
  /** Site time zone for zone-less timestamps (CRM_TIMEZONE, default UTC). */
  timezone?: string;
  /** Allow plain http to a non-loopback host (CRM_ALLOW_INSECURE_HTTP). */
  allowInsecureHttp?: boolean;
  /** Send PUT/PATCH/DELETE as POST + X-HTTP-Method-Override (CRM_METHOD_OVERRIDE). */
  methodOverride?: boolean;
  /** Requests/s ceiling (CRM_MAX_RPS); without it the limiter discovers the server's limit. */
  maxRps?: number;
  /** Requests in flight at once (CRM_MAX_CONCURRENCY, default 8). */
  maxConcurrency?: number;
  timeouts?: TransportTimeouts;
  /** Largest response body accepted (default 32 MiB). */
  maxBodyBytes?: number;
  /** Rate limiter to share; default: the process-wide one for this origin and user. */
  limiter?: RateLimiter;
  /** Immediate resend of an idempotent request after a reset connection (default 1, at most 1). */
  retry?: Partial<RetryPolicy>;
  logger?: Logger;
}

export interface CrmClient {
  contacts: ContactsApi;
  tags: TaxonomyApi<Tag>;
  lists: TaxonomyApi<List>;
  companies: CompaniesApi;
  customFields: CustomFieldsApi;
  campaigns: CampaignsApi;
  templates: TemplatesApi;
  sequences: SequencesApi;
  funnels: FunnelsApi;
  reports: ReportsApi;
  webhooks: WebhooksApi;
  /** Checks that the credentials work and may read (GET /reports/options, else one contact); throws an error naming the fix. */
  verifyCredentials(): Promise<void>;
  /** The one paginator (`./paginate.ts`); on a `withSignal` view, the view's signal also ends the scan. */
  paginate<T, P extends Page<T> = Page<T>>(fetchPage: (page: number, perPage: number) => Promise<P & Page<T>>, opts: PaginateOptions<T>): AsyncIterable<P>;
  stats(): ClientStats;
  readonly limiter: RateLimiter;
  /**
   * A view of this client whose requests are cancelled by `signal` (for example a Temporal
   * activity's cancellation signal); it shares the connections, limiter and stats. Closing the view
   * does nothing: close the client.
   */
  withSignal(signal: AbortSignal): CrmClient;
  close(): Promise<void>;
}

export function createCrmClient(opts: CrmClientOptions): CrmClient {
  if (!opts.username) throw new CrmArgumentError('The CRM username is empty: set CRM_USERNAME');
  const password = opts.password instanceof Secret ? opts.password : new Secret(opts.password ?? '');
  if (password.isEmpty) throw new CrmArgumentError('The CRM password is empty: set CRM_PASSWORD (an application password)');
  const timezone = opts.timezone ?? 'UTC';
  const maxConcurrency = Math.max(1, Math.floor(opts.maxConcurrency ?? 8));
  const transport = createTransport({
    baseUrl: opts.baseUrl,
    username: opts.username,
    password,
    allowInsecureHttp: opts.allowInsecureHttp,
    methodOverride: opts.methodOverride,
    connections: maxConcurrency,
    timeouts: opts.timeouts,
    maxBodyBytes: opts.maxBodyBytes,
  });
  const limiter = opts.limiter ?? sharedRateLimiter(`${transport.origin}|${opts.username}`, { maxRps: opts.maxRps, maxConcurrency });
  const logger = (opts.logger ?? silentLogger).child({ component: 'crm' });
  const stats: ClientStats = { requests: 0, retriesAdvised: 0, status429: 0, retries: 0 };
  const retry: RetryPolicy = { maxRetries: 1, ...opts.retry };
  const ts = createTimestampNormalizer(timezone);
  const ctx: ClientContext = { exec: createExecutor({ transport, limiter, logger, stats, retry }), schemas: buildSchemas(ts), ts, timezone, routes: new Map() };
  let closed = false;
  return assemble(ctx, {
    username: opts.username,
    stats,
    limiter,
    close: async () => {
      if (closed) return;
      closed = true;
      await transport.close();
    },
  });
}

/** The resource APIs over one executor; `withSignal` views reuse everything but the executor and the signal. */
function assemble(ctx: ClientContext, shared: { username: string; stats: ClientStats; limiter: RateLimiter; close: () => Promise<void> }, signal?: AbortSignal): CrmClient {
  const reports = createReportsApi(ctx);
  const contacts = createContactsApi(ctx);
  return {
    contacts,
    tags: createTagsApi(ctx),
    lists: createListsApi(ctx),
    companies: createCompaniesApi(ctx),
    customFields: createCustomFieldsApi(ctx),
    campaigns: createCampaignsApi(ctx),
    templates: createTemplatesApi(ctx),
    sequences: createSequencesApi(ctx),
    funnels: createFunnelsApi(ctx),
    reports,
    webhooks: createWebhooksApi(ctx),
    async verifyCredentials() {
      try {
        try {
          await reports.options(['statuses']);
        } catch (e) {
          // A CRM without the reports module, or a user who may not view reports (403: the
          // credentials are good): one contact read proves the credentials instead (and when that
          // route is missing too, its error names the base URL). A stream the user may not read
          // fails on its own, naming the capability.
          if (!(e instanceof NotFoundError && e.routeMissing) && !(e instanceof ForbiddenError)) throw e;
          await contacts.listPage({ page: 1, perPage: 1 });
        }
      } catch (e) {
        if (e instanceof ForbiddenError) {
          throw new ForbiddenError(
            `The CRM accepted the credentials of "${shared.username}" but refused to read (403): grant that user the CRM manager permissions crmsync needs (read contacts, view dashboard; see docs), and do not use an administrator account`,
            e.capabilities,
            { statusCode: e.statusCode, route: e.route, cause: e },
          );
        }
        throw e;
      }
    },
    paginate: (fetchPage, o) => paginate(fetchPage, signal ? { signal, ...o } : o),
    stats: () => ({ ...shared.stats }),
    limiter: shared.limiter,
    withSignal: (s) => assemble({ ...ctx, exec: (req, o) => ctx.exec({ ...req, signal: s }, o) }, { ...shared, close: async () => undefined }, s),
    close: shared.close,
  };
}

/** A client from configuration (CRM_* variables); `overrides` win. Throws ConfigError naming missing variables. */
export function crmClientFromConfig(config: Config, overrides: Partial<CrmClientOptions> = {}): CrmClient {
  const crm = requireCrm(config);
  // requireCrm has thrown a ConfigError naming the variable if any of these is missing.
  return createCrmClient({
    baseUrl: crm.baseUrl!,
    username: crm.username!,
    password: crm.password!,
    timezone: crm.timezone,
    allowInsecureHttp: crm.allowInsecureHttp,
    methodOverride: crm.methodOverride,
    maxRps: crm.maxRps,
    maxConcurrency: crm.maxConcurrency,
    ...overrides,
  });
}

/** Runs `fn` with a client and closes it afterwards, whatever happens. */
export async function withCrmClient<T>(opts: CrmClientOptions, fn: (client: CrmClient) => Promise<T>): Promise<T> {
  const client = createCrmClient(opts);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
