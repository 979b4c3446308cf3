import { readCustomFieldDefs, type CustomFieldDef } from '../custom-field-input.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { queryArray } from '../paging.js';
import { SimError } from '../sim-error.js';

const FIELD_TYPES = {
  text: { type: 'text', label: 'Single Line Text' },
  textarea: { type: 'textarea', label: 'Multi Line Text' },
  number: { type: 'number', label: 'Numeric Field' },
  'select-one': { type: 'select-one', label: 'Select choice', options: [] },
  checkbox: { type: 'checkbox', label: 'Checkboxes', options: [] },
  radio: { type: 'radio', label: 'Radio Choice', options: [] },
  date: { type: 'date', label: 'Date' },
  url: { type: 'url', label: 'URL' },
  email: { type: 'email', label: 'Email' },
};

function fieldJson(f: CustomFieldDef): Record<string, unknown> {
  const out: Record<string, unknown> = { label: f.label, slug: f.slug, type: f.type, field_key: f.fieldKey };
  if (f.options) out.options = [...f.options];
  out.group = f.group ?? 'default';
  return out;
}

function customFields(ctx: RouteCtx): SimResponse {
  const body: Record<string, unknown> = { fields: ctx.state.customFields.map(fieldJson) };
  if (queryArray(ctx.query, 'with').includes('field_types')) body.field_types = FIELD_TYPES;
  return ok(body);
}

/** Public: providers call it without credentials; a bad security code is a 200 with status false. */
function bounce(ctx: RouteCtx): SimResponse {
  const code = ctx.query.get('security_code') ?? (typeof ctx.body.security_code === 'string' ? ctx.body.security_code : '');
  if (code !== 'simulator-bounce-code') return ok({ status: false, message: 'Invalid security code', time: Math.floor(ctx.state.now / 1000) });
  const email = typeof ctx.body.email === 'string' ? ctx.body.email : '';
  const id = email ? ctx.state.contacts.findIdByEmail(email) : undefined;
  if (id !== undefined) {
    const type = ctx.body.type === 'complaint' ? 'complained' : 'bounced';
    ctx.state.updateContact(id, { status: type });
    ctx.state.emit(type === 'complained' ? 'email.spam_complaint' : 'email.bounced', { email: { id: 0, subject: null, contact_id: id, campaign_id: null } });
  }
  return ok({ status: true, message: id === undefined ? 'Contact not found' : 'Recorded', time: Math.floor(ctx.state.now / 1000) });
}

/** The repair holds a lock for a while; a call meanwhile reports failure inside a 200 (`pending: true`). */
function repairIndexes(ctx: RouteCtx): SimResponse {
  const now = ctx.state.now;
  if (ctx.state.repairLockUntil > now) return ok({ pending: true, message: 'Another repair is running; try again later.' });
  ctx.state.repairLockUntil = now + 2000;
  return ok({ pending: false, message: 'Database indexes have been repaired.' });
}

/** The interface's index repair, which fluentcrm-2.9's route index lacks (real mode: 404 rest_no_route). */
export const specMiscRoutes: RouteDef[] = [{ method: 'POST', path: '/setting/db-index-health/repair', caps: ['crm_manage_settings'], handler: repairIndexes }];

export const miscRoutes: RouteDef[] = [
  { method: 'GET', path: '/custom-fields/contacts', caps: ['crm_read_contacts', 'crm_manage_contacts'], handler: customFields },
  { method: 'POST', path: '/public/bounce_handler/simulator', caps: [], handler: bounce, bench: false },
  { method: 'POST', path: '/public/bounce-handler', caps: [], handler: bounce, bench: false },
];

/** fluentcrm-2.9's experimental settings; only the company module is simulated (POST_setting_experiments_enable_companies). */
function experiments(ctx: RouteCtx): SimResponse {
  const v = ctx.body.company_module;
  if (v === 'yes' || v === 'no') ctx.state.companyModule = v === 'yes';
  return ok({ message: 'Settings has been updated' });
}

/**
 * Replaces the definitions in place: contact writes, the webhook form's choices and the incoming
 * webhook read the same list. Values stay on the contacts; reads show those of defined fields
 * (Serializer.customValues), so a field defined again shows its values again.
 */
function saveCustomFields(ctx: RouteCtx): SimResponse {
  const defs = readCustomFieldDefs(ctx.body.fields);
  ctx.state.customFields.splice(0, ctx.state.customFields.length, ...defs);
  return ok({ fields: defs.map(fieldJson), message: 'Fields saved successfully!' });
}

/** fluentcrm-2.9's bounce routes: `{service_name}/{security_code}` and `{service_name}/handle/{security_code}`. */
const PLUGIN_BOUNCE_PATH = /^\/public\/bounce_handler\/([A-Za-z0-9_-]+)\/(?:handle\/)?[A-Za-z0-9_-]+\/?$/;

/**
 * A bounce service fluentcrm-2.9 does not know (POST_public_bounce_handler_unknown_service): 200
 * `{success: 0}` whatever the security code. The simulator's own service keeps its route above.
 * The plugin's route takes PATCH too, which a RouteDef cannot: its Allow header is set here.
 */
function unknownBounceService(ctx: RouteCtx): SimResponse {
  const service = PLUGIN_BOUNCE_PATH.exec(ctx.path)?.[1];
  if (service === undefined) throw new SimError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  return { ...ok({ success: 0, message: '', service, result: '', time: Math.floor(ctx.state.now / 1000) }), headers: { allow: 'GET, POST, PUT, PATCH, DELETE' } };
}

/** Routes the real plugin has and the interface does not. */
export const realMiscRoutes: RouteDef[] = [
  { method: 'POST', path: '/setting/experiments', caps: ['crm_manage_settings'], handler: experiments },
  // Captured for the admin only; the simulator asks for the settings capability (not captured).
  { method: 'PUT', path: '/custom-fields/contacts', caps: ['crm_manage_settings'], handler: saveCustomFields },
  ...(['GET', 'POST', 'PUT', 'DELETE'] as const).map((method): RouteDef => ({ method, path: '/public/bounce_handler/*', caps: [], handler: unknownBounceService })),
];
