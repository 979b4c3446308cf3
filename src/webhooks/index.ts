/** Webhook ingest: verify, spool durably, apply to the warehouse. See docs/webhooks.md. */
export { handleWebhookRequest, DEFAULT_MAX_BODY_BYTES, type WebhookRequest, type WebhookResponse, type WebhookHandlerDeps } from './handle-webhook-request.js';
export { startWebhookServer, withWebhookServer, DEFAULT_WEBHOOK_PATH, type WebhookServer, type WebhookServerOptions } from './webhook-server.js';
export { startWebhookService, withWebhookService, type AppliedStatus, type WebhookService, type WebhookServiceOptions } from './webhook-service.js';
export { openSpool, withSpool, DEFAULT_RETENTION_MS, type Spool, type SpoolOptions, type SpoolStats, type AppendOutcome } from './spool.js';
export type { SpoolEntry, SpoolRecord } from './spool-frame.js';
export { applyBatch, type ApplierWarehouse, type ApplyBatchResult } from './apply-batch.js';
export { createSecretResolver, parseWebhookSecretsFile, WebhookSecretsFile, type SecretResolver, type SecretResolverOptions } from './secret-resolver.js';
export { defaultSecretsFile, generateWebhookSecret, readSecretsFile, writeSecretsFile } from './secrets-file.js';
export { registerWebhook, RegisterWebhookOptions, type RegisterWebhookResult } from './register-webhook.js';
export { createClientRefetcher } from './client-refetcher.js';
export type { WebhookRefetcher } from './refetcher.js';
export { signBody, verifySignature } from './verify-signature.js';
export { WebhookEnvelope } from './webhook-envelope.js';
export { KNOWN_EVENTS, isKnownEvent, eventGroup, type KnownEvent, type EventGroup } from './event-names.js';
export { createWebhookMetrics, type WebhookMetrics, type ReceiveOutcome } from './webhook-metrics.js';
export { SpoolUnavailableError, WebhookSecretsError, WebhookApplyError } from './errors.js';
