import { CrmsyncError } from '../errors.js';

export type SimulatorMode = 'spec' | 'real';

/** A request's latency range at one page size (the `per_page` it asked for). */
export interface LatencyPoint {
  perPage: number;
  min: number;
  max: number;
}

/**
 * GET /subscribers on the captured real deployment (fixtures/fluentcrm-2.9/README.md, "Timings":
 * local, 4 PHP workers, 1,071 contacts): the fastest and slowest of ten at each page size.
 */
export const REAL_DEPLOYMENT_LATENCY: readonly LatencyPoint[] = [
  { perPage: 15, min: 28, max: 36 },
  { perPage: 100, min: 47, max: 71 },
  { perPage: 1000, min: 202, max: 311 },
];

export type LatencyOption =
  | { min: number; max: number }
  /** Exponential with the given mean, capped at `max` (default 10 x mean). */
  | { distribution: 'exponential'; mean: number; max?: number }
  /**
   * By the request's `per_page`, as a real deployment answers a small page faster than a large one:
   * the range is interpolated linearly between the points (ascending `perPage`), extended along the
   * last segment above them, and the first point's below them and for requests without `per_page`.
   */
  | { byPerPage: readonly LatencyPoint[] };

/** Fault injection; every decision is drawn from an RNG seeded by the simulator seed. */
export interface FaultOptions {
  /** Share of /v2 requests answered with a 5xx (0..1). */
  errorRate?: number;
  /** Requests per second allowed per credential; above it: 429 with Retry-After (seconds). */
  rateLimitRps?: number;
  latencyMs?: LatencyOption;
  /** Share of responses whose body is cut short and the connection closed. */
  truncateRate?: number;
  /** Share of requests whose connection is closed with no response. */
  dropRate?: number;
  /** Extra delay on every /reports/* endpoint. */
  slowReportsMs?: number;
  /**
   * Real mode only: share of requests answered 423 with a database deadlock or lock wait timeout
   * message, as the real deployment reports every database exception (no side effect happens).
   */
  deadlockRate?: number;
}

export interface SimulatorUser {
  username: string;
  password: string;
  capabilities: string[];
}

export interface SimulatorOptions {
  seed?: number;
  contacts?: number;
  port?: number;
  host?: string;
  mode?: SimulatorMode;
  timezone?: string;
  credentials?: { username: string; password: string };
  users?: SimulatorUser[];
  faults?: FaultOptions;
  /** Multiplies webhook retry intervals (1 min ... 24 h) and the 30 s receiver timeout. */
  webhookTimeScale?: number;
  allowHttpWebhookUrls?: boolean;
  /**
   * Real mode only: serve the interface's outbound webhooks instead of the free plugin's incoming
   * ones (as a deployment with an outbound-webhook add-on would), to test the receiver against the
   * real deployment's data quirks. Default false: real mode sends nothing outbound, as captured.
   */
  outboundWebhooks?: boolean;
  admin?: boolean;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Clock for timestamps (default Date.now); tests may pin it. */
  now?: () => number;
  /** Route prefixes the CRM lacks (e.g. "/reports", "/funnels"): answered 404 rest_no_route. */
  unavailable?: string[];
  /**
   * Serve at most this many rows per page whatever `per_page` asks, as some servers do; the
   * paginator envelope says what was served (`per_page`, and `last_page` computed from it).
   */
  perPageCap?: number;
  /**
   * Rows sharing a sort value other than the id come in an order of each page's own LIMIT window
   * (where the run of tied rows sits does not move), as a database ordering by that column alone
   * may serve them. Default off: tied rows in table order, as captured.
   */
  tiesByWindow?: boolean;
  /**
   * Real mode: FluentCRM's experimental company module (default on). Off, `/companies` answers
   * 403 rest_forbidden even to an admin and contacts carry no company keys, as captured
   * (GET_companies_module_disabled), until `POST /setting/experiments {company_module: "yes"}`.
   */
  companyModule?: boolean;
}

export interface ResolvedOptions {
  seed: number;
  contacts: number;
  port: number;
  host: string;
  mode: SimulatorMode;
  timezone: string;
  credentials: { username: string; password: string };
  users: SimulatorUser[];
  faults: FaultOptions;
  webhookTimeScale: number;
  allowHttpWebhookUrls: boolean;
  outboundWebhooks: boolean;
  admin: boolean;
  maxBodyBytes: number;
  now: () => number;
  unavailable: string[];
  perPageCap: number | undefined;
  tiesByWindow: boolean;
  companyModule: boolean;
}

export class SimulatorOptionsError extends CrmsyncError {
  constructor(message: string) {
    super('SIMULATOR_OPTIONS_INVALID', message);
  }
}

export const ALL_CAPABILITIES = [
  'crm_read_contacts',
  'crm_manage_contacts',
  'crm_manage_contacts_delete',
  'crm_manage_contacts_export',
  'crm_manage_contact_cats',
  'crm_manage_contact_cats_delete',
  'crm_read_emails',
  'crm_manage_emails',
  'crm_manage_email_delete',
  'crm_manage_email_templates',
  'crm_read_funnels',
  'crm_write_funnels',
  'crm_delete_funnels',
  'crm_manage_forms',
  'crm_view_dashboard',
  'crm_manage_settings',
] as const;

/** The manager: everything but deletes and settings (for 403 tests). */
export const MANAGER_CAPABILITIES = ALL_CAPABILITIES.filter((c) => !c.includes('delete') && c !== 'crm_manage_settings');

function rate(name: string, v: number | undefined): void {
  if (v !== undefined && !(v >= 0 && v <= 1)) throw new SimulatorOptionsError(`faults.${name} must be between 0 and 1, got ${v}`);
}

export function validateFaults(f: FaultOptions): FaultOptions {
  rate('errorRate', f.errorRate);
  rate('truncateRate', f.truncateRate);
  rate('dropRate', f.dropRate);
  rate('deadlockRate', f.deadlockRate);
  if (f.rateLimitRps !== undefined && !(f.rateLimitRps > 0)) throw new SimulatorOptionsError(`faults.rateLimitRps must be positive, got ${f.rateLimitRps}`);
  if (f.slowReportsMs !== undefined && !(f.slowReportsMs >= 0)) throw new SimulatorOptionsError('faults.slowReportsMs must be >= 0');
  const l = f.latencyMs;
  if (l && 'min' in l && !(l.min >= 0 && l.max >= l.min)) throw new SimulatorOptionsError('faults.latencyMs needs 0 <= min <= max');
  if (l && 'mean' in l && !(l.mean >= 0)) throw new SimulatorOptionsError('faults.latencyMs.mean must be >= 0');
  if (l && 'byPerPage' in l) {
    const points = l.byPerPage;
    if (points.length === 0 || points.some((p, i) => !(p.perPage >= 1 && p.min >= 0 && p.max >= p.min) || (i > 0 && !(p.perPage > points[i - 1]!.perPage)))) {
      throw new SimulatorOptionsError('faults.latencyMs.byPerPage needs at least one point, each with perPage >= 1 and 0 <= min <= max, in ascending perPage');
    }
  }
  return { ...f };
}

function randomPassword(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url');
}

export function resolveOptions(o: SimulatorOptions = {}): ResolvedOptions {
  const contacts = o.contacts ?? 300;
  if (!Number.isInteger(contacts) || contacts < 0 || contacts > 5_000_000) {
    throw new SimulatorOptionsError(`contacts must be an integer between 0 and 5000000, got ${contacts}`);
  }
  const timezone = o.timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new SimulatorOptionsError(`timezone "${timezone}" is not an IANA time zone; use e.g. "UTC" or "Europe/Berlin"`);
  }
  if (o.perPageCap !== undefined && !(Number.isInteger(o.perPageCap) && o.perPageCap >= 1)) {
    throw new SimulatorOptionsError(`perPageCap must be a positive integer, got ${o.perPageCap}`);
  }
  const scale = o.webhookTimeScale ?? 1;
  if (!(scale > 0)) throw new SimulatorOptionsError(`webhookTimeScale must be > 0, got ${scale}`);
  const credentials = o.credentials ?? { username: 'crmsync-admin', password: randomPassword() };
  const users: SimulatorUser[] = o.users ?? [
    { ...credentials, capabilities: [...ALL_CAPABILITIES] },
    { username: 'manager', password: `${credentials.password}-manager`, capabilities: [...MANAGER_CAPABILITIES] },
  ];
  if (!users.some((u) => u.username === credentials.username)) {
    users.unshift({ ...credentials, capabilities: [...ALL_CAPABILITIES] });
  }
  return {
    seed: o.seed ?? 42,
    contacts,
    port: o.port ?? 0,
    host: o.host ?? '127.0.0.1',
    mode: o.mode ?? 'spec',
    timezone,
    credentials,
    users,
    faults: validateFaults(o.faults ?? {}),
    webhookTimeScale: scale,
    allowHttpWebhookUrls: o.allowHttpWebhookUrls ?? false,
    outboundWebhooks: (o.mode ?? 'spec') === 'spec' || (o.outboundWebhooks ?? false),
    admin: o.admin ?? false,
    maxBodyBytes: o.maxBodyBytes ?? 1024 * 1024,
    now: o.now ?? Date.now,
    unavailable: (o.unavailable ?? []).map((p) => {
      if (!/^\/[a-z0-9/_-]+$/i.test(p)) throw new SimulatorOptionsError(`unavailable takes route prefixes like "/reports", got "${p.slice(0, 60)}"`);
      return p.replace(/\/+$/, '');
    }),
    perPageCap: o.perPageCap,
    tiesByWindow: o.tiesByWindow ?? false,
    companyModule: o.companyModule ?? true,
  };
}
