-- Rows the push cannot deliver without a change to the source: rejected locally (invalid field),
-- refused by the CRM with a non-retryable error, or failing five runs in a row.
CREATE OR REPLACE VIEW push_dead_letters AS
SELECT
  source,
  push_key,
  email,
  outcome,
  error_field,
  error_code,
  error_message,
  http_status,
  attempts,
  failures,
  last_attempt_at,
  updated_at
FROM _push_ledger
WHERE outcome = 'rejected'
   OR (outcome = 'failed' AND (NOT coalesce(retryable, false) OR failures >= 5));
