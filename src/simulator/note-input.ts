import { invalidParam, SimError } from './sim-error.js';
import { parseTimestamp } from './time.js';

export const NOTE_TYPES = [
  'note',
  'call',
  'email',
  'meeting',
  'quote_sent',
  'quote_accepted',
  'quote_refused',
  'invoice_sent',
  'invoice_part_paid',
  'invoice_paid',
  'invoice_refunded',
  'transaction',
  'feedback',
  'tweet',
  'facebook_post',
];

/**
 * A note's body. The written interface requires created_at on every write (spec mode: 400 without
 * it); fluentcrm-2.9 takes a note without one and dates it now (POST_subscribers_id_notes).
 */
export function readNote(body: Record<string, unknown>, timeZone: string, real: boolean): { title: string; description: string; type: string; createdAt: number | undefined } {
  const n = (typeof body.note === 'object' && body.note !== null ? body.note : body) as Record<string, unknown>;
  const required = real ? ['title', 'description', 'type'] : ['title', 'description', 'type', 'created_at'];
  const missing = required.filter((k) => typeof n[k] !== 'string' || !(n[k] as string).trim());
  if (missing.length > 0) {
    throw new SimError(400, 'rest_missing_callback_param', `Missing parameter(s): ${missing.join(', ')}; a note needs title, description, type and created_at.`, {
      status: 422,
      body: Object.fromEntries(missing.map((k) => [k, { required: `The ${k} field is required.` }])),
    });
  }
  if (!NOTE_TYPES.includes(n.type as string)) throw invalidParam('type', `type must be one of ${NOTE_TYPES.join(', ')}.`, 'in');
  // Note timestamps are site-local like every zone-less timestamp of the service.
  const createdAt = typeof n.created_at === 'string' ? parseTimestamp(n.created_at.slice(0, 40), timeZone) : undefined;
  if (!real && !Number.isFinite(createdAt)) throw invalidParam('created_at', 'created_at must be a timestamp such as 2026-01-31 14:05:00.');
  return {
    title: (n.title as string).slice(0, 500),
    description: (n.description as string).slice(0, 20_000),
    type: n.type as string,
    createdAt: createdAt !== undefined && Number.isFinite(createdAt) ? createdAt : undefined,
  };
}
