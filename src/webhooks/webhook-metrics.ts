/** Outcomes a delivery can have at the receiver; each has its own counter on /metrics. */
export type ReceiveOutcome =
  | 'accepted'
  | 'duplicate'
  | 'replayed'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'missing_headers'
  | 'unknown_webhook'
  | 'bad_signature'
  | 'invalid_utf8'
  | 'json_too_deep'
  | 'malformed_json'
  | 'event_time_out_of_range'
  | 'invalid_envelope'
  | 'spool_unavailable';

export interface WebhookMetrics {
  /** Counts one outcome and returns its total so far. */
  count(outcome: ReceiveOutcome): number;
  snapshot(): { received: Record<string, number> };
  /** Prometheus text exposition; `gauges` are sampled by the caller (spool and apply state). */
  render(gauges?: Record<string, number>): string;
}

export function createWebhookMetrics(): WebhookMetrics {
  const received = new Map<string, number>();
  return {
    count(outcome) {
      const n = (received.get(outcome) ?? 0) + 1;
      received.set(outcome, n);
      return n;
    },
    snapshot: () => ({ received: Object.fromEntries(received) }),
    render(gauges = {}) {
      const lines = ['# TYPE crmsync_webhook_deliveries_total counter'];
      for (const [outcome, n] of received) {
        const kind = outcome === 'accepted' || outcome === 'duplicate' ? outcome : outcome === 'replayed' ? 'duplicate' : outcome === 'spool_unavailable' ? 'unavailable' : 'rejected';
        lines.push(`crmsync_webhook_deliveries_total{outcome="${kind}",reason="${outcome}"} ${n}`);
      }
      for (const [name, v] of Object.entries(gauges)) {
        lines.push(`# TYPE crmsync_webhook_${name} gauge`, `crmsync_webhook_${name} ${v}`);
      }
      return `${lines.join('\n')}\n`;
    },
  };
}
