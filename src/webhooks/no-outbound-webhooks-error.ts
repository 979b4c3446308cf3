import { CrmsyncError } from '../errors.js';

/** What keeps the warehouse fresh when the CRM cannot push events. */
export const FRESH_WITHOUT_WEBHOOKS =
  'crmsync keeps the warehouse fresh without them: run `crmsync sync` on a schedule (`crmsync schedule create`), which picks up every edit, with the reconciliation sweep (`crmsync sync --reconcile`, or `--reconcile-every` on the schedule) catching deleted contacts';

/**
 * The CRM cannot deliver outbound webhook events (the free FluentCRM plugin: its `/webhooks` are
 * incoming webhooks, or the route is absent). Registering a receiver there can never work.
 */
export class NoOutboundWebhooksError extends CrmsyncError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('CRM_NO_OUTBOUND_WEBHOOKS', message, options);
  }
}
