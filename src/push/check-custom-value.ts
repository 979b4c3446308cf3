import type { CustomField } from '../crm/types.js';
import { checkEmail, checkIsoDate, checkNumber, checkUrl, clip, type CheckFailure } from './field-checks.js';

export const MAX_CUSTOM_TEXT_LENGTH = 10_000;
const MULTI_VALUE_TYPES = new Set(['checkbox']);
const OPTION_TYPES = new Set(['select-one', 'radio', 'checkbox', 'select-multi']);

export type CustomValueResult = { value: string | string[] } | { omit: true } | CheckFailure;

/**
 * Checks one custom value against the field definitions from `/custom-fields/contacts`. The CRM
 * drops unknown slugs silently and rejects undefined options, so both are caught here, before
 * sending, with a message that names the slug.
 */
export function checkCustomValue(fields: ReadonlyMap<string, CustomField>, slug: string, raw: unknown): CustomValueResult {
  const field = fields.get(slug);
  if (!field) {
    const known = [...fields.keys()].slice(0, 20).join(', ') || '(none defined)';
    return { message: `unknown custom field slug "${clip(slug)}"; defined slugs: ${known}` };
  }
  if (raw === null || raw === undefined || raw === '') return { omit: true };
  if (MULTI_VALUE_TYPES.has(field.type)) return checkOptions(field, toStringList(raw));
  if (Array.isArray(raw)) return { message: `is a list, but field "${slug}" (${field.type}) takes one value` };
  if (typeof raw === 'object') return { message: `is an object, but field "${slug}" (${field.type}) takes a text value` };
  const value = String(raw);
  if (OPTION_TYPES.has(field.type)) {
    const checked = checkOptions(field, [value]);
    return 'value' in checked ? { value } : checked;
  }
  const failure = checkByType(field.type, value);
  if (failure) return failure;
  if (value.length > MAX_CUSTOM_TEXT_LENGTH) return { message: `is ${value.length} characters long (limit ${MAX_CUSTOM_TEXT_LENGTH})` };
  return { value };
}

function checkByType(type: string, value: string): CheckFailure | undefined {
  switch (type) {
    case 'number':
      return checkNumber(value);
    case 'date':
      return checkIsoDate(value);
    case 'email':
      return checkEmail(value);
    case 'url':
      return checkUrl(value);
    default:
      return undefined;
  }
}

function checkOptions(field: CustomField, values: string[]): CustomValueResult {
  const bad = values.filter((v) => !field.options.includes(v));
  if (bad.length > 0) {
    const options = field.options.map((o) => `"${o}"`).join(', ') || '(none)';
    return { message: `option "${clip(bad[0] ?? '')}" is not defined for ${field.type} field "${field.slug}"; defined options: ${options}` };
  }
  return { value: values };
}

/** Checkbox values come as a list, a JSON array string or a comma-separated string. */
function toStringList(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.filter((v) => v !== null && v !== undefined && v !== '').map(String);
  const text = String(raw).trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.map(String);
    } catch {
      // not JSON: treat as comma-separated
    }
  }
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
