import type { CompanyRec, TaxonomyRec } from './model.js';
import { contactHash, seededCompanies, seededTaxonomy, slugify } from './seed-data.js';
import { notFound, SimError } from './sim-error.js';

export type Taxonomy = 'tag' | 'list';

/** Tags, lists and companies: titles and names unique, ids never reused. */
export class Catalog {
  readonly tags = new Map<number, TaxonomyRec>();
  readonly lists = new Map<number, TaxonomyRec>();
  readonly companies = new Map<number, CompanyRec>();
  #nextTag: number;
  #nextList: number;
  #nextCompany: number;

  constructor(
    private readonly seed: number,
    companyCount: number,
    private readonly now: () => number,
  ) {
    for (const t of seededTaxonomy('tag')) this.tags.set(t.id, t);
    for (const l of seededTaxonomy('list')) this.lists.set(l.id, l);
    for (const c of seededCompanies(seed, companyCount)) this.companies.set(c.id, c);
    this.#nextTag = this.tags.size + 1;
    this.#nextList = this.lists.size + 1;
    this.#nextCompany = companyCount + 1;
  }

  /** Tag or list ids from ids, slugs or titles (real deployments accept all three); unknown ones are dropped. */
  resolveRefs(kind: Taxonomy, refs: unknown[] | undefined): number[] {
    if (!refs) return [];
    const map = this.taxonomy(kind);
    const out: number[] = [];
    for (const ref of refs) {
      let id: number | undefined;
      const n = Number(ref);
      if (Number.isInteger(n) && map.has(n)) id = n;
      else if (typeof ref === 'string') {
        // Real deployments accept slugs and titles as well as ids.
        for (const t of map.values()) if (t.slug === ref || t.title === ref) id = t.id;
      }
      if (id !== undefined && !out.includes(id)) out.push(id);
    }
    return out;
  }

  taxonomy(kind: Taxonomy): Map<number, TaxonomyRec> {
    return kind === 'tag' ? this.tags : this.lists;
  }

  createTaxonomy(kind: Taxonomy, body: Record<string, unknown>): TaxonomyRec {
    const title = typeof body.title === 'string' ? body.title.trim().slice(0, 190) : '';
    if (!title) {
      throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): title; send a title.', {
        status: 422,
        body: kind === 'list' ? { title: { required: 'The title field is required.' }, slug: { required: 'The slug field is required.' } } : { title: { required: 'The title field is required.' } },
      });
    }
    const slug = typeof body.slug === 'string' && body.slug.trim() ? slugify(body.slug) : slugify(title);
    const map = this.taxonomy(kind);
    for (const t of map.values()) {
      if (t.title.toLowerCase() === title.toLowerCase() || t.slug === slug) {
        throw new SimError(400, 'rest_invalid_param', `A ${kind} titled "${title}" already exists; choose another title.`, {
          status: 422,
          body: { slug: { unique: 'The slug attribute is already taken and must be unique.' } },
        });
      }
    }
    const now = this.now();
    const id = kind === 'tag' ? this.#nextTag++ : this.#nextList++;
    const rec: TaxonomyRec = { id, title, slug, description: typeof body.description === 'string' ? body.description.slice(0, 1000) : '', createdAt: now, updatedAt: now };
    map.set(id, rec);
    return rec;
  }

  updateTaxonomy(kind: Taxonomy, id: number, body: Record<string, unknown>): TaxonomyRec {
    const map = this.taxonomy(kind);
    const old = map.get(id);
    if (!old) throw notFound(kind, { status: 404, body: { message: `No query results for model [FluentCrm\\App\\Models\\${kind === 'tag' ? 'Tag' : 'Lists'}].` } });
    const next = { ...old };
    if (typeof body.title === 'string' && body.title.trim()) next.title = body.title.trim().slice(0, 190);
    if (typeof body.slug === 'string' && body.slug.trim()) next.slug = slugify(body.slug);
    if (typeof body.description === 'string') next.description = body.description.slice(0, 1000);
    for (const t of map.values()) {
      if (t.id === id) continue;
      if (t.title.toLowerCase() === next.title.toLowerCase() || t.slug === next.slug) {
        throw new SimError(400, 'rest_invalid_param', `Another ${kind} already uses this title or slug; choose another.`, {
          status: 422,
          body: { message: `Provided slug already exist in another ${kind}` },
        });
      }
    }
    next.updatedAt = this.now();
    map.set(id, next);
    return next;
  }

  deleteTaxonomy(kind: Taxonomy, id: number): TaxonomyRec {
    const map = this.taxonomy(kind);
    const old = map.get(id);
    if (!old) throw notFound(kind);
    map.delete(id);
    // Memberships stay in stored records and are filtered on read (ids are never reused).
    return old;
  }

  createCompany(body: Record<string, unknown>): CompanyRec {
    const name = typeof body.name === 'string' ? body.name.trim().slice(0, 190) : '';
    if (!name) throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): name; send a company name.', { status: 422, body: { name: { required: 'The name field is required.' } } });
    for (const c of this.companies.values()) {
      if (c.name.toLowerCase() === name.toLowerCase()) {
        throw new SimError(400, 'rest_invalid_param', `A company named "${name}" already exists; choose another name.`, {
          status: 422,
          body: { name: { unique: 'The name attribute is already taken and must be unique.' } },
        });
      }
    }
    const now = this.now();
    const id = this.#nextCompany++;
    const rec: CompanyRec = {
      id,
      hash: contactHash(this.seed ^ 0x9999, id),
      name,
      industry: null,
      website: null,
      email: null,
      phone: null,
      description: null,
      logo: null,
      linkedinUrl: null,
      addressLine1: null,
      addressLine2: null,
      city: null,
      state: null,
      country: null,
      postalCode: null,
      employeesNumber: 0,
      type: 'Prospect',
      ownerId: null,
      status: 'active',
      createdAt: now,
      updatedAt: now,
    };
    this.companies.set(id, applyCompanyFields(rec, body));
    return this.companies.get(id) as CompanyRec;
  }

  updateCompany(id: number, body: Record<string, unknown>): CompanyRec {
    const old = this.companies.get(id);
    if (!old) throw notFound('company', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Company].' } });
    const next = applyCompanyFields({ ...old }, body);
    next.updatedAt = this.now();
    this.companies.set(id, next);
    return next;
  }

  deleteCompany(id: number): void {
    if (!this.companies.delete(id)) throw notFound('company', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Company].' } });
  }
}

const COMPANY_FIELDS: Record<string, keyof CompanyRec> = {
  name: 'name',
  industry: 'industry',
  website: 'website',
  email: 'email',
  phone: 'phone',
  description: 'description',
  logo: 'logo',
  linkedin_url: 'linkedinUrl',
  address_line_1: 'addressLine1',
  address_line_2: 'addressLine2',
  city: 'city',
  state: 'state',
  country: 'country',
  postal_code: 'postalCode',
  type: 'type',
  status: 'status',
};

function applyCompanyFields(rec: CompanyRec, body: Record<string, unknown>): CompanyRec {
  const out = rec as unknown as Record<string, unknown>;
  for (const [k, prop] of Object.entries(COMPANY_FIELDS)) {
    const v = body[k];
    if (typeof v === 'string' && (k !== 'name' || v.trim())) out[prop] = v.slice(0, 500);
  }
  if (body.employees_number !== undefined && Number.isFinite(Number(body.employees_number))) rec.employeesNumber = Math.trunc(Number(body.employees_number));
  if (body.owner_id !== undefined) rec.ownerId = Number.isInteger(Number(body.owner_id)) && Number(body.owner_id) > 0 ? Number(body.owner_id) : null;
  return rec;
}
