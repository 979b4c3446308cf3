import { CONTACT_STATUSES, type ContactStatus } from '../crm/types.js';

/** A failed check: the message says what is wrong and what to do. */
export interface CheckFailure {
  message: string;
}

export const MAX_EMAIL_LENGTH = 254;
export const MAX_TEXT_LENGTH = 255;

// Close to the HTML living standard's "valid e-mail address", plus a dot in the domain: the CRM
// validates emails server-side and we want to be at least as strict, so nothing we send bounces.
const EMAIL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function checkEmail(value: string): CheckFailure | undefined {
  if (value.length === 0) return { message: 'is empty; every row needs an email address' };
  if (value.length > MAX_EMAIL_LENGTH) return { message: `is ${value.length} characters long (limit ${MAX_EMAIL_LENGTH})` };
  if (!EMAIL.test(value)) return { message: `"${clip(value)}" is not a valid email address; fix or remove the row` };
  return undefined;
}

export function checkStatus(value: string): { status: ContactStatus } | CheckFailure {
  const status = value.trim().toLowerCase();
  if ((CONTACT_STATUSES as readonly string[]).includes(status)) return { status: status as ContactStatus };
  if (status.length === 0) return { message: `is empty; use one of ${CONTACT_STATUSES.join(', ')}` };
  // Real deployments store an unknown status as "subscribed" without an error: never send one.
  return {
    message: `"${clip(value)}" is not a contact status; use one of ${CONTACT_STATUSES.join(', ')} (the CRM would silently store it as subscribed)`,
  };
}

export function checkIsoDate(value: string): CheckFailure | undefined {
  const m = ISO_DATE.exec(value);
  if (!m) return { message: `"${clip(value)}" is not a date in YYYY-MM-DD form` };
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) {
    return { message: `"${value}" is not a calendar date` };
  }
  return undefined;
}

export function checkUrl(value: string): CheckFailure | undefined {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return undefined;
  } catch {
    // fall through
  }
  return { message: `"${clip(value)}" is not an http(s) URL` };
}

export function checkNumber(value: string): CheckFailure | undefined {
  if (/^-?\d+(\.\d+)?$/.test(value.trim())) return undefined;
  return { message: `"${clip(value)}" is not a number` };
}

/** Shortens a value quoted in a message, so one bad cell cannot flood the ledger or logs. */
export function clip(value: string, max = 80): string {
  return value.length > max ? `${value.slice(0, max)}...` : value;
}
