import type { ClientContext } from '../client-context.js';
import { asObject, parseRecord, schemaError } from '../parse.js';
import type { CustomField } from '../types.js';

export interface CustomFieldsApi {
  list(): Promise<CustomField[]>;
}

export function createCustomFieldsApi(ctx: ClientContext): CustomFieldsApi {
  return {
    async list() {
      const route = 'GET /custom-fields/contacts';
      const res = await ctx.exec({ method: 'GET', path: '/custom-fields/contacts' });
      const body = Array.isArray(res) ? undefined : asObject(res, route);
      // An answer without `fields` is not this endpoint's: taken as none, it would pass in silence.
      if (body && !('fields' in body)) throw schemaError(route, `no "fields" key (keys: ${Object.keys(body).slice(0, 8).join(', ') || 'none'})`);
      const fields = body ? body.fields : res;
      const arr = Array.isArray(fields) ? fields : fields && typeof fields === 'object' ? Object.values(fields) : [];
      return arr.map((f) => parseRecord(ctx.schemas.CustomField, f, route));
    },
  };
}
