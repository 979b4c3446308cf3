/**
 * What a targeted contact fetch asks for so the contact carries its custom values: the real CRM
 * (fluentcrm-2.9) sends `custom_values` on a single contact only with this `with[]`; the
 * interface lists it among the `with[]` values. Listings ask with `customFields: true` instead.
 */
export const CONTACT_WITH_CUSTOM_VALUES = { with: ['subscriber.custom_values'] };
