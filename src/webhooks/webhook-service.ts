import type { Logger } from '../logger.js';
import type { EventTimeWindow } from './check-event-time.js';
import type { ConnectionLimits } from './guard-connections.js';
import { DEFAULT_MAX_BODY_BYTES } from './handle-webhook-request.js';
import type { SecretResolver } from './secret-resolver.js';
import { openSpool, type Spool } from './spool.js';
import { createWebhookMetrics, type WebhookMetrics } from './webhook-metrics.js';
import { startWebhookServer, type WebhookServer } from './webhook-server.js';

export interface WebhookServiceOptions {
  spoolDir: string;
  host: string;
  port: number;
  path?: string;
  secrets: SecretResolver;
  logger?: Logger;
  maxBodyBytes?: number;
  /** How far an event's own timestamp may be from now (default: 30 h back, 5 min ahead). */
  eventTimeWindow?: EventTimeWindow;
  /** Timeouts and connection caps of the HTTP server. */
  limits?: Partial<ConnectionLimits>;
  maxSegmentBytes?: number;
  /** Batches written and not yet durable, at most (see the spool writer). */
  syncsInFlight?: number;
  /** fdatasyncs that may run at once (bench and tests; default: the spool's). */
  syncThreads?: number;
  /**
   * Where applying stands (the apply workflow on the warehouse worker applies; the receiver only
   * verifies and spools): readiness and metrics report it.
   */
  appliedStatus?: () => AppliedStatus | undefined;
}

/** How far the warehouse worker has applied the spool, as the receiver shows it. */
export interface AppliedStatus {
  appliedSeq: number;
  deadLettered: number;
  lastError: string | null;
  consecutiveFailures: number;
}

export interface WebhookService {
  url: string;
  port: number;
  spool: Spool;
  metrics: WebhookMetrics;
  connections: WebhookServer['connections'];
  close(): Promise<void>;
}

export async function withWebhookService<T>(options: WebhookServiceOptions, fn: (service: WebhookService) => Promise<T>): Promise<T> {
  const service = await startWebhookService(options);
  try {
    return await fn(service);
  } finally {
    await service.close();
  }
}

/** The receiver and its spool, wired together and closed in reverse order. */
export async function startWebhookService(options: WebhookServiceOptions): Promise<WebhookService> {
  const { logger } = options;
  const metrics = createWebhookMetrics();
  const spool = await openSpool({
    dir: options.spoolDir,
    ...(options.maxSegmentBytes ? { maxSegmentBytes: options.maxSegmentBytes } : {}),
    ...(options.syncsInFlight ? { syncsInFlight: options.syncsInFlight } : {}),
    ...(options.syncThreads ? { syncThreads: options.syncThreads } : {}),
    ...(logger ? { logger } : {}),
  });
  let server: WebhookServer;
  try {
    server = await startWebhookServer({
      host: options.host,
      port: options.port,
      ...(options.path ? { path: options.path } : {}),
      handler: {
        secrets: options.secrets,
        spool,
        metrics,
        maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
        ...(options.eventTimeWindow ? { eventTimeWindow: options.eventTimeWindow } : {}),
        ...(logger ? { logger } : {}),
      },
      ...(options.limits ? { limits: options.limits } : {}),
      isReady: () => {
        const s = spool.stats();
        const a = options.appliedStatus?.();
        return {
          ready: s.healthy,
          detail: {
            spool: { healthy: s.healthy, committedSeq: s.committedSeq, segments: s.segments },
            applier: a ? { appliedSeq: a.appliedSeq, lag: s.committedSeq - a.appliedSeq, lastError: a.lastError, deadLettered: a.deadLettered } : null,
          },
        };
      },
      gauges: () => {
        const s = spool.stats();
        const a = options.appliedStatus?.();
        return {
          spool_committed_seq: s.committedSeq,
          spool_segments: s.segments,
          spool_indexed_deliveries: s.indexedDeliveries,
          spool_healthy: s.healthy ? 1 : 0,
          ...(a ? { applied_seq: a.appliedSeq, apply_lag: s.committedSeq - a.appliedSeq, apply_consecutive_failures: a.consecutiveFailures, dead_lettered: a.deadLettered } : {}),
        };
      },
      ...(logger ? { logger } : {}),
    });
  } catch (err) {
    await spool.close();
    throw err;
  }
  return {
    url: server.url,
    port: server.port,
    spool,
    metrics,
    connections: () => server.connections(),
    async close() {
      try {
        await server.close();
      } finally {
        await spool.close();
      }
    },
  };
}
