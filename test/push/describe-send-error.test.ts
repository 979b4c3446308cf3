import { describe, expect, it } from 'vitest';
import { classifyErrorResponse } from '../../src/crm/classify-response.js';
import { describeSendError, fieldNamedIn } from '../../src/push/describe-send-error.js';

const body = { email: 'a@example.test', status: 'subscribed', first_name: 'Ann', phone: '12', custom_values: { shoe_size: '9', size: 'L' }, __force_update: 'yes' };

/** The CRM's answer to a POST /subscribers, through the client's own classification. */
const refusal = (statusCode: number, answer: unknown) => classifyErrorResponse({ method: 'POST', path: '/subscribers', statusCode, headers: {}, body: JSON.stringify(answer) });

describe('the field a refused upsert is blamed on (the ledger error_field)', () => {
  it('takes the field errors the CRM lists first', () => {
    const err = refusal(422, { code: 'rest_invalid_param', message: 'Invalid parameter(s): email', data: { status: 400, params: { first_name: 'too long' } } });
    expect(describeSendError(err, body).field).toBe('first_name');
  });

  it("reads the interface's 422, whose message alone names the field, against the push's fields", () => {
    const err = refusal(422, { code: 'invalid_phone', message: 'The phone field must be a valid phone number.', data: { status: 422 } });
    expect(describeSendError(err, body)).toMatchObject({ field: 'phone', httpStatus: 422, retryable: false, fatal: false });
    // Without the body there is nothing to read the message against.
    expect(describeSendError(err).field).toBeNull();
  });

  it('matches whole words only, the earliest named field first, custom values by slug', () => {
    expect(fieldNamedIn('The shoe_size value is not a number', body)).toBe('custom_values.shoe_size');
    expect(fieldNamedIn('Status must be one of subscribed, pending; email is fine', body)).toBe('status');
    // "first_name" does not name `name`-like fields, and "sizes" does not name `size`.
    expect(fieldNamedIn('Allowed sizes are S, M', body)).toBeNull();
    expect(fieldNamedIn('FIRST_NAME is too long', body)).toBe('first_name');
    expect(fieldNamedIn('Something went wrong', body)).toBeNull();
    expect(fieldNamedIn('force update refused', body)).toBeNull();
    // A standard field the row left empty (so not sent) is still the one named.
    expect(fieldNamedIn('The city field is required.', body)).toBe('city');
  });
});
