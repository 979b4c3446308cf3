import { isValidEmail } from './contact-input.js';
import type { SimResponse } from './http-types.js';
import type { IncomingWebhookRec, IncomingWebhooks } from './incoming-webhooks.js';
import { SimError } from './sim-error.js';
import type { SimState } from './state.js';

/**
 * fluentcrm-2.9's incoming webhook: the site URL `/?fluentcrm=1&route=contact&hash=<key>` that
 * `value.url` of every `/webhooks` entry names. It is not a REST route: no credentials are
 * checked (the hash is the secret; WordPress takes application passwords on REST requests only),
 * and every answer is HTTP 200 `{success, data}` (POST_incoming_webhook_*, GET_incoming_webhook).
 */
export function isSiteWebhookUrl(url: URL): boolean {
  return url.pathname === '/' && url.searchParams.get('fluentcrm') === '1' && url.searchParams.get('route') === 'contact';
}

export interface SiteWebhookRequest {
  /** The HTTP method as sent: WordPress's method override applies to REST requests only. */
  method: string;
  query: URLSearchParams;
  /** Reads the JSON or form body; called only once the method and the hash have passed. */
  readBody: () => Promise<Record<string, unknown>>;
}

/** The contact columns the plugin takes from a webhook body that the simulator models. */
const MAIN_FIELDS = ['first_name', 'last_name', 'phone', 'address_line_1', 'address_line_2', 'city', 'state', 'postal_code', 'country', 'date_of_birth', 'source', 'contact_type'];

const answer = (success: boolean, data: Record<string, unknown>): SimResponse => ({ status: 200, body: { success, data } });

/** What PHP's array_filter keeps: not '', '0' nor 0. */
const filled = (v: unknown): v is string | number => (typeof v === 'string' && v !== '' && v !== '0') || (typeof v === 'number' && v !== 0);

/**
 * The checks in the plugin's order, each with its captured answer: method, hash, then the email.
 * A valid POST creates or updates the contact through SimState's create path with the webhook's
 * status, tags and lists (the body's own override them, as in the plugin's handler).
 */
export async function answerSiteWebhook(req: SiteWebhookRequest, state: SimState, hooks: IncomingWebhooks): Promise<SimResponse> {
  if (req.method !== 'POST') return answer(false, { message: 'Webhook must need to be as POST Method', type: 'invalid_request_method' });
  // An absent hash is not captured: answered like the captured wrong one.
  const hook = hooks.findByKey(req.query.get('hash') ?? '');
  if (!hook) return answer(false, { message: 'Invalid Webhook Hash', type: 'invalid_webhook_hash' });
  // The plugin reads query and body together; an unparsable body is no data (not captured).
  const data: Record<string, unknown> = { ...Object.fromEntries(req.query), ...(await bodyOrNothing(req)) };
  if (!filled(data.email)) return invalid({ required: 'The email field is required.' });
  // Not captured for the webhook: the message of the REST create's invalid email.
  if (!isValidEmail(data.email)) return invalid({ email: 'The email must be a valid email address.' });
  const { action, contact } = state.createContact(contactBody(data, hook, state), { forceUpdate: true });
  // A pending contact is sent the double opt-in email there (README); the simulator sends no
  // mail, and the answer is the same.
  return answer(true, { message: action, id: contact.id, type: 'success' });
}

const invalid = (email: Record<string, string>): SimResponse => answer(false, { message: 'Validation failed.', errors: { email }, type: 'email_validation_failed' });

async function bodyOrNothing(req: SiteWebhookRequest): Promise<Record<string, unknown>> {
  try {
    return await req.readBody();
  } catch (err) {
    if (err instanceof SimError && err.specCode === 'rest_invalid_json') return {};
    throw err;
  }
}

/**
 * The create body: the modelled columns and custom fields named at the top level (empty values
 * dropped, as the plugin's array_filter does), the status and lists and tags. An existing
 * contact is updated with the merge rules of the REST create's `__force_update`; which status
 * change the plugin forces there is not captured. Values of another type, and a malformed
 * date_of_birth, are left out (not captured).
 */
function contactBody(data: Record<string, unknown>, hook: IncomingWebhookRec, state: SimState): Record<string, unknown> {
  const body: Record<string, unknown> = { email: String(data.email).trim() };
  for (const key of MAIN_FIELDS) if (filled(data[key])) body[key] = String(data[key]);
  if (typeof body.date_of_birth === 'string' && !/^\d{4}-\d{2}-\d{2}$/.test(body.date_of_birth)) delete body.date_of_birth;
  const custom: Record<string, string | string[]> = {};
  for (const f of state.customFields) {
    const v = data[f.slug];
    if (filled(v)) custom[f.slug] = String(v);
    else if (f.type === 'checkbox' && Array.isArray(v) && v.length > 0) custom[f.slug] = v.map(String);
  }
  if (Object.keys(custom).length > 0) body.custom_values = custom;
  body.tags = postedIds(data.tags) ?? listOf(hook.value.tags);
  body.lists = postedIds(data.lists) ?? listOf(hook.value.lists);
  // A webhook without a status is not captured: the REST create's default.
  body.status = [data.status, hook.value.status].find((s) => typeof s === 'string' && s !== '') ?? 'subscribed';
  return body;
}

/** Ids posted as a list or a comma-separated string; none numeric keeps the webhook's. */
function postedIds(v: unknown): number[] | undefined {
  const items = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : [];
  const ids = items.filter((x) => (typeof x === 'number' || typeof x === 'string') && x !== '' && Number.isFinite(Number(x))).map(Number);
  return ids.length > 0 ? ids.filter((n) => n !== 0) : undefined;
}

const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
