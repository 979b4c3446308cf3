-- Webhook receiver health from `webhook_events`: per day of the site (site_date, as the growth
-- views count), deliveries, how late they arrived after
-- the event (delivery lag) and how long they waited to be applied (apply lag); and the dead
-- letters the applier set aside and no retry has applied yet (`crmsync webhooks dead-letters`).
CREATE OR REPLACE VIEW webhook_lag_daily AS
SELECT site_date(received_at) AS day,
  count(*) AS deliveries,
  count(*) FILTER (WHERE status = 'failed') AS failed,
  round(quantile_cont(epoch(received_at) - epoch(event_at), 0.5), 3) AS delivery_lag_p50_s,
  round(quantile_cont(epoch(received_at) - epoch(event_at), 0.95), 3) AS delivery_lag_p95_s,
  round(quantile_cont(epoch(applied_at) - epoch(received_at), 0.5), 3) AS apply_lag_p50_s,
  round(quantile_cont(epoch(applied_at) - epoch(received_at), 0.95), 3) AS apply_lag_p95_s
FROM webhook_events WHERE received_at IS NOT NULL
GROUP BY 1
ORDER BY 1;

CREATE OR REPLACE VIEW webhook_dead_letters_open AS
SELECT delivery_id, event, webhook_id, received_at, last_failed_at AS failed_at, attempts,
  coalesce(error, reason) AS error
FROM webhook_dead_letters WHERE resolved_at IS NULL
ORDER BY last_failed_at DESC, delivery_id;
