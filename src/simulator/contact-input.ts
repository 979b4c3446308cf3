import type { ContactRec, CustomFieldRec, CustomValue } from './model.js';
import type { SimulatorMode } from './options.js';
import { invalidParam, SimError } from './sim-error.js';

export const CONTACT_STATUSES = ['subscribed', 'unsubscribed', 'pending', 'bounced', 'complained'] as const;

/** Plain contact fields a write may set, as the interface names them. */
const STRING_FIELDS: Record<string, keyof ContactRec> = {
  first_name: 'firstName',
  last_name: 'lastName',
  phone: 'phone',
  address_line_1: 'addressLine1',
  address_line_2: 'addressLine2',
  city: 'city',
  state: 'state',
  postal_code: 'postalCode',
  country: 'country',
  date_of_birth: 'dateOfBirth',
  contact_type: 'contactType',
  source: 'source',
};

const EMAIL_RE = /^[^\s@"<>]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,}$/;

export function isValidEmail(v: unknown): v is string {
  return typeof v === 'string' && v.length <= 254 && EMAIL_RE.test(v.trim());
}

export interface ContactPatch {
  fields: Partial<ContactRec>;
  email?: string;
  status?: string;
  tags?: unknown[];
  lists?: unknown[];
  attachTags?: unknown[];
  detachTags?: unknown[];
  attachLists?: unknown[];
  detachLists?: unknown[];
  custom?: Record<string, CustomValue>;
  companyIds?: number[];
}

function arr(v: unknown): unknown[] | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  return Array.isArray(v) ? v : [v];
}

/**
 * Reads a create or update body into a patch. Spec mode validates strictly (400
 * rest_invalid_param); real mode follows fluentcrm-2.9: an unknown status becomes subscribed,
 * unknown custom fields are dropped silently, empty strings do not blank fields on upsert.
 */
export function readContactPatch(body: Record<string, unknown>, mode: SimulatorMode, fields: readonly CustomFieldRec[], opts: { keepEmptyStrings: boolean }): ContactPatch {
  const patch: ContactPatch = { fields: {} };
  const out = patch.fields as Record<string, unknown>;
  for (const [key, prop] of Object.entries(STRING_FIELDS)) {
    const v = body[key];
    if (v === undefined) continue;
    if (v !== null && typeof v !== 'string' && typeof v !== 'number') throw invalidParam(key, `${key} must be a string.`, 'string');
    const s = v === null ? null : String(v).slice(0, 500);
    if (s === '' && !opts.keepEmptyStrings) continue;
    if (key === 'date_of_birth' && s && !/^\d{4}-\d{2}-\d{2}$/.test(s)) throw invalidParam(key, 'date_of_birth must be YYYY-MM-DD.', 'date');
    out[prop] = s === '' ? null : s;
  }
  if (body.email !== undefined) {
    if (!isValidEmail(body.email)) throw invalidParam('email', 'The email must be a valid email address.', 'email');
    patch.email = (body.email as string).trim();
  }
  if (body.status !== undefined && body.status !== null && body.status !== '') {
    const st = String(body.status);
    if ((CONTACT_STATUSES as readonly string[]).includes(st)) patch.status = st;
    else if (mode === 'real') patch.status = 'subscribed';
    else throw invalidParam('status', `status must be one of ${CONTACT_STATUSES.join(', ')}.`, 'in');
  }
  patch.tags = arr(body.tags);
  patch.lists = arr(body.lists);
  patch.attachTags = arr(body.attach_tags);
  patch.detachTags = arr(body.detach_tags);
  patch.attachLists = arr(body.attach_lists);
  patch.detachLists = arr(body.detach_lists);
  const companies = arr(body.company_ids ?? body.companies);
  if (companies) patch.companyIds = companies.map(Number).filter((n) => Number.isInteger(n) && n > 0);
  if (body.custom_values !== undefined && body.custom_values !== null) {
    patch.custom = readCustomValues(body.custom_values, mode, fields);
  }
  return patch;
}

function readCustomValues(raw: unknown, mode: SimulatorMode, fields: readonly CustomFieldRec[]): Record<string, CustomValue> {
  if (Array.isArray(raw) && raw.length === 0) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidParam('custom_values', 'custom_values must be an object of field slug to value.', 'array');
  const out: Record<string, CustomValue> = {};
  for (const [slug, value] of Object.entries(raw as Record<string, unknown>)) {
    const def = fields.find((f) => f.slug === slug);
    if (!def) {
      if (mode === 'real') continue;
      throw new SimError(400, 'rest_invalid_param', `Unknown custom field "${slug}" in custom_values; define it first or remove it.`, undefined);
    }
    out[slug] = checkCustomValue(def, value, mode);
  }
  return out;
}

function checkCustomValue(def: CustomFieldRec, value: unknown, mode: SimulatorMode): CustomValue {
  const bad = (why: string): SimError => new SimError(400, 'rest_invalid_param', `Invalid value for custom field "${def.slug}": ${why}.`, { status: 422, body: { [def.slug]: { invalid: why } } });
  if (def.type === 'checkbox') {
    const values = (Array.isArray(value) ? value : [value]).map(String);
    if (mode === 'spec') for (const v of values) if (!def.options?.includes(v)) throw bad(`"${v}" is not one of ${def.options?.join(', ')}`);
    return values;
  }
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') throw bad('expected a string');
  const s = String(value).slice(0, 2000);
  if (s === '' || mode === 'real') return s;
  switch (def.type) {
    case 'select-one':
    case 'radio':
      if (!def.options?.includes(s)) throw bad(`"${s}" is not one of ${def.options?.join(', ')}`);
      break;
    case 'number':
      if (!Number.isFinite(Number(s))) throw bad('expected a number');
      break;
    case 'date':
      if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) throw bad('expected YYYY-MM-DD');
      break;
    case 'email':
      if (!isValidEmail(s)) throw bad('expected an email address');
      break;
    case 'url':
      if (!URL.canParse(s)) throw bad('expected a URL');
      break;
  }
  return s;
}

/** `__force_update` as each mode reads it (real: only "yes" or JSON true work). */
export function isForceUpdate(v: unknown, mode: SimulatorMode): boolean {
  if (mode === 'real') return v === true || v === 'yes';
  return v === true || v === 'yes' || v === 'true' || v === 1 || v === '1';
}
