import { EVENT_NAMES } from './events.js';
import type { WebhookRec } from './model.js';
import { SimError } from './sim-error.js';

/** Checks a webhook create (all fields) or update (given fields): name, HTTPS url, known events, status, secret. */
export function validateWebhookBody(body: Record<string, unknown>, partial: boolean, allowHttp: boolean): Partial<WebhookRec> {
  const out: Partial<WebhookRec> = {};
  if (!partial || body.name !== undefined) {
    if (typeof body.name !== 'string' || !body.name.trim())
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): name; give the webhook a name.', { status: 422, body: { name: { required: 'Name is required' } } });
    out.name = body.name.trim().slice(0, 190);
  }
  if (!partial || body.url !== undefined) {
    const url = typeof body.url === 'string' ? body.url.trim() : '';
    let ok = false;
    let http = false;
    try {
      const u = new URL(url);
      http = u.protocol === 'http:';
      ok = url.length <= 2048 && (u.protocol === 'https:' || (allowHttp && http)) && !u.username && !u.password;
    } catch {
      ok = false;
    }
    // The simulator's own words (no capture has an outbound webhook refused): http:// is this
    // simulator's choice, so the refusal names the flag that lifts it.
    const lift = http && !allowHttp ? ', or start the simulator with --allow-http-webhooks (option allowHttpWebhookUrls) to accept http:// URLs' : '';
    if (!ok) throw new SimError(400, 'invalid_webhook_url', `The webhook url must be a valid HTTPS URL without credentials; use https://...${lift}`);
    out.url = url;
  }
  if (!partial || body.events !== undefined) {
    const events = body.events;
    if (!Array.isArray(events) || events.length === 0 || events.length > EVENT_NAMES.length) {
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): events; send a non-empty array of event names.', {
        status: 422,
        body: { events: { required: 'Events are required' } },
      });
    }
    const bad = events.filter((e) => typeof e !== 'string' || !(EVENT_NAMES as readonly string[]).includes(e));
    if (bad.length > 0) throw new SimError(400, 'invalid_webhook_event', `Unsupported webhook event(s): ${bad.map(String).join(', ').slice(0, 200)}; use names from the Events table.`);
    out.events = [...new Set(events as string[])];
  }
  if (body.status !== undefined) {
    if (body.status !== 'active' && body.status !== 'inactive' && body.status !== 'failed') throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): status; use active or inactive.');
    out.status = body.status;
  }
  if (body.secret !== undefined) {
    if (typeof body.secret !== 'string' || body.secret.length < 8 || body.secret.length > 256) throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): secret; use 8 to 256 characters.');
    out.secret = body.secret;
  }
  return out;
}
