import type { CompanyRec, ContactRec, NoteRec, TaxonomyRec } from './model.js';
import type { SimState } from './state.js';
import { formatLocal } from './time.js';

/**
 * Response shapes. Spec mode sends integers where the spec says integer; real mode copies
 * fluentcrm-2.9's typing (user_id, company_id, pivot ids, total_points as strings; `[]` for an
 * empty custom_values object). Key order follows the captured fixtures.
 */
export interface ContactView {
  customKey?: 'custom_fields' | 'custom_values';
  stats?: boolean;
  companies?: boolean;
  /** GET /subscribers/{id}: fluentcrm-2.9 sends `companies` there but no `company` key (list rows have both). */
  single?: boolean;
}

export class Serializer {
  readonly real: boolean;
  readonly #tz: string;
  readonly #tags = new Map<number, Record<string, unknown>>();
  readonly #lists = new Map<number, Record<string, unknown>>();

  constructor(private readonly state: SimState) {
    this.real = state.opts.mode === 'real';
    this.#tz = state.opts.timezone;
  }

  ts(ms: number | null): string | null {
    return ms === null ? null : formatLocal(ms, this.#tz);
  }

  /** Integer id or count: a numeric string in real mode where fluentcrm-2.9 sends one. */
  num(n: number | null): number | string | null {
    return n === null ? null : this.real ? String(n) : n;
  }

  taxonomy(t: TaxonomyRec, kind: 'tag' | 'list'): Record<string, unknown> {
    const out: Record<string, unknown> = { id: t.id, title: t.title, slug: t.slug, description: t.description };
    if (kind === 'list') out.is_public = '0';
    out.created_at = this.ts(t.createdAt);
    out.updated_at = this.ts(t.updatedAt);
    return out;
  }

  #membership(kind: 'tag' | 'list', id: number, c: ContactRec): Record<string, unknown> | undefined {
    const cache = kind === 'tag' ? this.#tags : this.#lists;
    let base = cache.get(id);
    if (!base) {
      const t = this.state.taxonomy(kind).get(id);
      if (!t) return undefined;
      base = this.taxonomy(t, kind);
      cache.set(id, base);
    }
    if (!this.real) return base;
    const when = this.ts(this.state.contacts.attachedAt(c, kind, id));
    return {
      ...base,
      pivot: {
        subscriber_id: String(c.id),
        object_id: String(id),
        object_type: kind === 'tag' ? 'FluentCrm\\App\\Models\\Tag' : 'FluentCrm\\App\\Models\\Lists',
        created_at: when,
        updated_at: when,
      },
    };
  }

  contact(c: ContactRec, view: ContactView = {}): Record<string, unknown> {
    const full = [c.firstName, c.lastName].filter((x) => x).join(' ');
    const out: Record<string, unknown> = {
      id: c.id,
      user_id: this.num(c.userId),
      hash: c.hash,
      contact_owner: null,
      company_id: this.num(c.companyId),
      prefix: null,
      first_name: c.firstName,
      last_name: c.lastName,
      email: c.email,
      timezone: null,
      address_line_1: c.addressLine1,
      address_line_2: c.addressLine2,
      postal_code: c.postalCode,
      city: c.city,
      state: c.state,
      country: c.country,
      ip: null,
      latitude: null,
      longitude: null,
      total_points: this.real ? '0' : 0,
      life_time_value: this.real ? '0' : 0,
      phone: c.phone,
      status: c.status,
      contact_type: c.contactType,
      source: c.source,
      avatar: null,
      date_of_birth: c.dateOfBirth,
      created_at: this.ts(c.createdAt),
      last_activity: null,
      updated_at: this.ts(c.updatedAt),
    };
    if (view.customKey) out[view.customKey] = this.customValues(c);
    if (view.stats) out.stats = { ...c.stats };
    out.full_name = full;
    out.photo = `https://www.gravatar.com/avatar/${c.hash.slice(0, 32)}?s=128&d=mm`;
    out.tags = c.tags.map((t) => this.#membership('tag', t, c)).filter(Boolean);
    out.lists = c.lists.map((l) => this.#membership('list', l, c)).filter(Boolean);
    if ((this.real && this.state.companyModule) || view.companies) {
      const primary = c.companyId === null ? undefined : this.state.companies.get(c.companyId);
      if (!(this.real && view.single)) out.company = primary ? this.company(primary) : null;
      out.companies = c.companyIds
        .map((x) => this.state.companies.get(x))
        .filter((x): x is CompanyRec => !!x)
        .map((x) => (this.real ? { ...this.company(x), pivot: this.#companyPivot(c, x) } : this.company(x)));
    }
    return out;
  }

  /**
   * A contact as another record embeds it (a funnel-subscriber row, a campaign email row):
   * without its tags, lists and companies.
   */
  bareContact(c: ContactRec): Record<string, unknown> {
    const { tags: _tags, lists: _lists, company: _company, companies: _companies, ...out } = this.contact(c);
    return out;
  }

  /**
   * A contact as fluentcrm-2.9 answers a write (every POST_subscribers_* and PUT_subscribers_*
   * capture of both sites): the relations the write loaded and no others, in its order: `lists`
   * when the write set lists, `tags` when it set tags, `companies` when `companies` is asked (a
   * force-update of an existing contact); never `company` or custom values.
   */
  written(c: ContactRec, loaded: { tags: boolean; lists: boolean; companies: boolean }): Record<string, unknown> {
    const { tags, lists, company: _company, companies, ...out } = this.contact(c);
    if (loaded.lists) out.lists = lists;
    if (loaded.tags) out.tags = tags;
    if (loaded.companies && companies !== undefined) out.companies = companies;
    return out;
  }

  /** The pivot row fluentcrm-2.9 puts on each of a contact's companies (ids as strings). */
  #companyPivot(c: ContactRec, co: CompanyRec): Record<string, unknown> {
    const when = this.ts(Math.max(c.createdAt, co.createdAt));
    return { subscriber_id: String(c.id), object_id: String(co.id), object_type: 'FluentCrm\\App\\Models\\Company', created_at: when, updated_at: when };
  }

  /**
   * A contact's custom values. Real mode reads them through the fields defined now, in their
   * order, as fluentcrm-2.9 does: values of a field dropped by PUT /custom-fields/contacts stay
   * stored (the plugin keeps the meta rows; `sim.truth()` shows them) but are not shown (not
   * captured: the plugin's read, not a replayed answer).
   */
  customValues(c: ContactRec): Record<string, unknown> | unknown[] {
    const keys = this.real ? this.state.customFields.map((f) => f.slug).filter((k) => k in c.custom) : Object.keys(c.custom);
    if (keys.length === 0 && this.real) return [];
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const v = c.custom[k] as string | string[];
      out[k] = Array.isArray(v) ? [...v] : v;
    }
    return out;
  }

  company(co: CompanyRec, contactsCount?: number): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: co.id,
      hash: co.hash,
      owner_id: this.num(co.ownerId),
      name: co.name,
      industry: co.industry,
      email: co.email,
      timezone: null,
      address_line_1: co.addressLine1,
      address_line_2: co.addressLine2,
      postal_code: co.postalCode,
      city: co.city,
      state: co.state,
      country: co.country,
      employees_number: this.real ? String(co.employeesNumber) : co.employeesNumber,
      description: co.description,
      phone: co.phone,
      type: co.type,
      logo: co.logo,
      website: co.website,
      linkedin_url: co.linkedinUrl,
    };
    // fluentcrm-2.9 has three more (always null on the captured sites) and no `status` column.
    if (this.real) Object.assign(out, { facebook_url: null, twitter_url: null, date_of_start: null });
    else out.status = co.status;
    Object.assign(out, {
      meta: { custom_values: [] },
      created_at: this.ts(co.createdAt),
      updated_at: this.ts(co.updatedAt),
    });
    if (contactsCount !== undefined) out.contacts_count = contactsCount;
    return out;
  }

  /**
   * Real mode's answer to POST /subscribers/{id}/notes: the attributes the plugin's model was
   * created with, in that order, ids as integers (POST_subscribers_id_notes); no parent_id, status
   * or is_private until the row is read back.
   */
  createdNote(n: NoteRec): Record<string, unknown> {
    return {
      title: n.title,
      description: n.description,
      type: n.type,
      created_at: this.ts(n.createdAt),
      subscriber_id: n.subscriberId,
      updated_at: this.ts(n.updatedAt),
      created_by: n.createdBy,
      id: n.id,
    };
  }

  note(n: NoteRec, listed: boolean): Record<string, unknown> {
    // Listed notes carry subscriber_id/created_by as strings (spec: string/integer; captured: strings).
    const asStr = listed;
    const out: Record<string, unknown> = {
      id: n.id,
      subscriber_id: asStr ? String(n.subscriberId) : n.subscriberId,
      parent_id: n.parentId,
      created_by: asStr ? String(n.createdBy) : n.createdBy,
      status: n.status,
      type: n.type,
      is_private: '1',
      title: n.title,
      description: n.description,
      created_at: this.ts(n.createdAt),
      updated_at: this.ts(n.updatedAt),
    };
    if (listed) out.added_by = { ID: n.createdBy, display_name: 'admin', first_name: '', last_name: '' };
    return out;
  }
}
