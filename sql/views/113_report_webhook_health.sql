-- Webhook receiver health from `webhook_events`: per day, deliveries, how late they arrived after
-- the event (delivery lag) and how long they waited to be applied (apply lag); and the dead
-- letters, deliveries recorded as failed with their error (they are not retried).
CREATE OR REPLACE VIEW webhook_lag_daily AS
SELECT CAST(received_at AS DATE) AS day,
  count(*) AS deliveries,
  count(*) FILTER (WHERE status = 'failed') AS failed,
  round(quantile_cont(epoch(received_at) - epoch(event_at), 0.5), 3) AS delivery_lag_p50_s,
  round(quantile_cont(epoch(received_at) - epoch(event_at), 0.95), 3) AS delivery_lag_p95_s,
  round(quantile_cont(epoch(applied_at) - epoch(received_at), 0.5), 3) AS apply_lag_p50_s,
  round(quantile_cont(epoch(applied_at) - epoch(received_at), 0.95), 3) AS apply_lag_p95_s
FROM webhook_events WHERE received_at IS NOT NULL
GROUP BY 1
ORDER BY 1;

CREATE OR REPLACE VIEW webhook_dead_letters AS
SELECT delivery_id, event, webhook_id, received_at, applied_at, error
FROM webhook_events WHERE status = 'failed'
ORDER BY received_at DESC, delivery_id;
