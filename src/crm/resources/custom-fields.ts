import type { ClientContext } from '../client-context.js';
import { asObject, parseRecord } from '../parse.js';
import type { CustomField } from '../types.js';

export interface CustomFieldsApi {
  list(): Promise<CustomField[]>;
}

export function createCustomFieldsApi(ctx: ClientContext): CustomFieldsApi {
  return {
    async list() {
      const route = 'GET /custom-fields/contacts';
      const res = await ctx.exec({ method: 'GET', path: '/custom-fields/contacts' });
      const fields = Array.isArray(res) ? res : asObject(res, route).fields;
      const arr = Array.isArray(fields) ? fields : fields && typeof fields === 'object' ? Object.values(fields) : [];
      return arr.map((f) => parseRecord(ctx.schemas.CustomField, f, route));
    },
  };
}
