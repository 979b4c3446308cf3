import { describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError, ServerError } from '../../src/crm/errors.js';
import { unavailableReason } from '../../src/sync/stream-availability.js';

describe('which failures mean "not available on this CRM"', () => {
  it('a missing route, and companies refused while the module is off; not a missing record or a server error', () => {
    const noRoute = new NotFoundError('No such route', true, { statusCode: 404, route: 'GET /funnels' });
    expect(unavailableReason('funnels', noRoute)).toBe('not available on this CRM (GET /funnels answers 404 rest_no_route)');
    expect(unavailableReason('companies', new ForbiddenError('forbidden', [], { statusCode: 403, route: 'GET /companies' }))).toMatch(
      /^not available on this CRM \(403 on \/companies: the company module is off, or the API user lacks crm_manage_contact_cats/,
    );
    expect(unavailableReason('tags', new ForbiddenError('forbidden', [], { statusCode: 403 }))).toBeUndefined();
    expect(unavailableReason('funnels', new NotFoundError('Not found', false, { statusCode: 404 }))).toBeUndefined();
    expect(unavailableReason('funnels', new ServerError('boom', { statusCode: 500 }))).toBeUndefined();
  });
});
