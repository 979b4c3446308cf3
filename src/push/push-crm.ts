import type { ContactWrite, CustomField, TaxonomyRef, UpsertResult } from '../crm/types.js';

/**
 * What the pusher needs from the CRM. `pushCrmFromClient` adapts the shared client; the
 * client's adaptive limiter paces every call made through it.
 */
export interface PushCrm {
  listCustomFields(): Promise<CustomField[]>;
  listTags(): Promise<TaxonomyRef[]>;
  listLists(): Promise<TaxonomyRef[]>;
  createTag(title: string): Promise<TaxonomyRef>;
  createList(title: string): Promise<TaxonomyRef>;
  /** POST /subscribers with `__force_update: "yes"` (create or update by email). */
  upsertContact(body: ContactWrite): Promise<UpsertResult>;
}
