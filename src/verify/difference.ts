/**
 * One way the warehouse differs from the CRM. `kind` is stable (scripts may match on it):
 * - missing_in_warehouse: in the CRM, not live in the warehouse
 * - deleted_in_crm: live in the warehouse, gone from the CRM (deleted there, not tombstoned here)
 * - contact_field_mismatch: a typed contact column differs (`field`)
 * - custom_value_mismatch: a contact's custom field value differs (`field` is the slug)
 * - missing_membership / extra_membership: a tag or list membership absent from / extra in
 *   `contact_tags` or `contact_lists` (`field` is `tag <id>` or `list <id>`)
 * - title_mismatch: the title (name, label) of a tag, list, custom field, company, campaign or funnel
 * - field_mismatch: another column of those streams or of a funnel subscriber
 */
export type DifferenceKind =
  'missing_in_warehouse' | 'deleted_in_crm' | 'contact_field_mismatch' | 'custom_value_mismatch' | 'missing_membership' | 'extra_membership' | 'title_mismatch' | 'field_mismatch';

export interface Difference {
  stream: string;
  kind: DifferenceKind;
  /** The row's id: a contact or entity id, a custom field slug, `<funnel id>/<subscriber row id>`. */
  id: string;
  field?: string;
  /** Comparable text of each side (ISO 8601 UTC for times); null is no value. */
  warehouse?: string | null;
  crm?: string | null;
  detail: string;
}

/** "warehouse "a" vs CRM "b"" with no value shown as (none). */
export function sides(warehouse: string | null, crm: string | null): string {
  const show = (v: string | null): string => (v === null ? '(none)' : JSON.stringify(v));
  return `warehouse ${show(warehouse)} vs CRM ${show(crm)}`;
}
