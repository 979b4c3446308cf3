import { createAdminHandler } from './admin.js';
import { startChurn, type ChurnHandle, type ChurnOptions } from './churn.js';
import { FaultInjector } from './faults.js';
import { Marketing } from './marketing.js';
import { createMutateApi, type MutateApi } from './mutate.js';
import { resolveOptions, SimulatorOptionsError, type FaultOptions, type SimulatorOptions } from './options.js';
import { buildRouter } from './route-table.js';
import { ADMIN_PREFIX, createSimServer, listen, type SimulatorStats } from './server.js';
import { SimState } from './state.js';
import { buildTruth, type SimulatorTruth } from './truth.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

export interface RunningSimulator {
  /** http://127.0.0.1:PORT/v2 (real mode: .../wp-json/fluent-crm/v2), the spec's {base_url}. */
  baseUrl: string;
  /** The admin user (all capabilities). */
  credentials: { username: string; password: string };
  /** A user without delete or settings capabilities, for 403 tests (when users were not given). */
  managerCredentials: { username: string; password: string } | undefined;
  /** Ground-truth endpoint (GET, admin credentials), when started with admin: true. */
  adminUrl: string | undefined;
  mode: 'spec' | 'real';
  truth(): SimulatorTruth;
  mutate: MutateApi;
  setFaults(f: FaultOptions): void;
  churn(opts: ChurnOptions): ChurnHandle;
  stats(): SimulatorStats;
  resetStats(): void;
  /** Resolves once no webhook delivery is pending or in flight (or after timeoutMs). */
  settleWebhooks(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the simulated CRM on an HTTP port (default 127.0.0.1, port 0). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const opts = resolveOptions(options);
  const state = new SimState(opts);
  state.warmCounts();
  const marketing = new Marketing(state);
  const webhooks = new WebhookDispatcher({ timeScale: opts.webhookTimeScale, allowHttp: opts.allowHttpWebhookUrls, now: opts.now, incomingOnly: !opts.outboundWebhooks });
  state.onEvent((e) => webhooks.onEvent(e));
  const faults = new FaultInjector(opts.seed, opts.faults, opts.now);
  const router = buildRouter(opts.mode, opts.unavailable);
  const stats: SimulatorStats = { requests: 0, byRoute: {}, status429: 0, status5xx: 0, status423: 0 };
  const basePath = opts.mode === 'real' ? '/wp-json/fluent-crm/v2' : '/v2';
  const truth = (): SimulatorTruth => buildTruth(state, marketing, webhooks);
  const churns = new Set<ChurnHandle>();
  const churn = (o: ChurnOptions): ChurnHandle => {
    const h = startChurn(state, o, opts.seed + churns.size);
    churns.add(h);
    return {
      counts: h.counts,
      stop: async () => {
        churns.delete(h);
        await h.stop();
      },
    };
  };
  const setFaults = (f: FaultOptions): void => faults.set(f);
  const admin = opts.admin ? createAdminHandler({ opts, truth, stats, setFaults, churn }) : undefined;
  const server = createSimServer({
    opts,
    state,
    marketing,
    webhooks,
    router,
    faults,
    stats,
    basePath,
    ...(admin ? { admin } : {}),
  });
  let address: Awaited<ReturnType<typeof listen>>;
  try {
    address = await listen(server, opts.port, opts.host);
  } catch (err) {
    state.dispose();
    await webhooks.close();
    const code = (err as NodeJS.ErrnoException).code;
    throw new SimulatorOptionsError(
      code === 'EADDRINUSE'
        ? `Port ${opts.port} on ${opts.host} is in use; choose another port, or 0 for a free one.`
        : `Cannot listen on ${opts.host}:${opts.port} (${code ?? String(err)}); check host and port.`,
    );
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;
  const manager = options.users ? undefined : opts.users.find((u) => u.username !== opts.credentials.username);
  return {
    baseUrl: `${origin}${basePath}`,
    credentials: { ...opts.credentials },
    managerCredentials: manager ? { username: manager.username, password: manager.password } : undefined,
    adminUrl: opts.admin ? `${origin}${ADMIN_PREFIX}/truth` : undefined,
    mode: opts.mode,
    truth,
    mutate: createMutateApi(state, marketing),
    setFaults,
    churn,
    stats: () => structuredClone(stats),
    resetStats: () => {
      stats.requests = 0;
      stats.byRoute = {};
      stats.status429 = 0;
      stats.status5xx = 0;
      stats.status423 = 0;
    },
    settleWebhooks: (t) => webhooks.settle(t),
    close: async () => {
      for (const c of churns) await c.stop();
      churns.clear();
      state.dispose();
      await webhooks.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
