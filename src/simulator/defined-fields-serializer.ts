import type { ContactRec, CustomFieldRec } from './model.js';
import { Serializer } from './serialize.js';
import type { SimState } from './state.js';

/**
 * Real mode's serializer: a contact's custom values only for the fields defined now, in their
 * order, as fluentcrm-2.9 reads them through the definitions. Its values stay stored when a
 * field is dropped (PUT /custom-fields/contacts), as the plugin keeps the meta rows; the ground
 * truth (`sim.truth()`) shows them all. Not captured: the plugin's read, not a replayed answer.
 */
export class DefinedFieldsSerializer extends Serializer {
  readonly #fields: readonly CustomFieldRec[];

  constructor(state: SimState) {
    super(state);
    this.#fields = state.customFields;
  }

  override customValues(c: ContactRec): Record<string, unknown> | unknown[] {
    const all = super.customValues(c);
    if (Array.isArray(all)) return all;
    const out: Record<string, unknown> = {};
    for (const f of this.#fields) if (f.slug in all) out[f.slug] = all[f.slug];
    return Object.keys(out).length === 0 ? [] : out;
  }
}
