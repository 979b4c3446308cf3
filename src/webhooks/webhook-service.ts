import type { Logger } from '../logger.js';
import type { EventTimeWindow } from './check-event-time.js';
import type { ConnectionLimits } from './guard-connections.js';
import { DEFAULT_MAX_BODY_BYTES } from './handle-webhook-request.js';
import type { WebhookRefetcher } from './refetcher.js';
import type { SecretResolver } from './secret-resolver.js';
import { openSpool, type Spool } from './spool.js';
import type { SyncOn } from './spool-writer.js';
import { createWebhookApplier, type ApplierStatus, type WebhookApplier, type WebhookWarehouse } from './webhook-applier.js';
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
  /** fdatasyncs in flight at once, and where they run (see the spool writer). */
  syncsInFlight?: number;
  syncOn?: SyncOn;
  /**
   * Where applying stands when another part applies (the apply workflow on the warehouse worker):
   * readiness and metrics report it, and the spool prunes what it applied.
   */
  appliedStatus?: () => Pick<ApplierStatus, 'appliedSeq' | 'deadLettered' | 'lastError' | 'consecutiveFailures'> | undefined;
  /** Without it the service only receives and spools (another process may apply later). */
  apply?: {
    refetcher: WebhookRefetcher;
    withWarehouse: <T>(fn: (w: WebhookWarehouse) => Promise<T>) => Promise<T>;
    publishEveryMs?: number;
    batchSize?: number;
    lingerMs?: number;
    concurrency?: number;
  };
}

export interface WebhookService {
  url: string;
  port: number;
  spool: Spool;
  metrics: WebhookMetrics;
  applier: WebhookApplier | undefined;
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

/** The receiver, its spool and (optionally) the applier, wired together and closed in reverse order. */
export async function startWebhookService(options: WebhookServiceOptions): Promise<WebhookService> {
  const { logger } = options;
  const metrics = createWebhookMetrics();
  const spool = await openSpool({
    dir: options.spoolDir,
    ...(options.maxSegmentBytes ? { maxSegmentBytes: options.maxSegmentBytes } : {}),
    ...(options.syncsInFlight ? { syncsInFlight: options.syncsInFlight } : {}),
    ...(options.syncOn ? { syncOn: options.syncOn } : {}),
    ...(logger ? { logger } : {}),
  });
  let applier: WebhookApplier | undefined;
  let server: WebhookServer;
  try {
    if (options.apply) {
      const { apply } = options;
      applier = createWebhookApplier({
        spool,
        spoolId: spool.id,
        refetcher: apply.refetcher,
        withWarehouse: apply.withWarehouse,
        metrics,
        ...(logger ? { logger } : {}),
        ...(apply.batchSize ? { batchSize: apply.batchSize } : {}),
        ...(apply.lingerMs !== undefined ? { lingerMs: apply.lingerMs } : {}),
        ...(apply.concurrency ? { concurrency: apply.concurrency } : {}),
        ...(apply.publishEveryMs !== undefined ? { publishEveryMs: apply.publishEveryMs } : {}),
      });
    }
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
        const a = applier?.status() ?? options.appliedStatus?.();
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
        const a = applier?.status() ?? options.appliedStatus?.();
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
  applier?.start();
  return {
    url: server.url,
    port: server.port,
    spool,
    metrics,
    applier,
    connections: () => server.connections(),
    async close() {
      try {
        await server.close();
      } finally {
        try {
          await applier?.stop();
        } finally {
          await spool.close();
        }
      }
    },
  };
}
