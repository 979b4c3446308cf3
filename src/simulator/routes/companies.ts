import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { paginator, readPaging } from '../paging.js';
import { SimError } from '../sim-error.js';

const CATS = ['crm_manage_contact_cats'];

function listCompanies(ctx: RouteCtx): SimResponse {
  const paging = readPaging(ctx, 10);
  const q = ctx.query;
  const by = q.get('sort_by') ?? 'id';
  const order = (q.get('sort_order') ?? q.get('sort_type') ?? 'DESC').toUpperCase();
  if (!['id', 'name', 'created_at', 'updated_at', 'employees_number'].includes(by) && !ctx.real) {
    throw new SimError(400, 'rest_invalid_param', 'Invalid parameter(s): sort_by; use id, name, created_at, updated_at or employees_number.');
  }
  const search = (q.get('search') ?? '').toLowerCase().slice(0, 200);
  const counts = ctx.state.counts();
  const rows = [...ctx.state.companies.values()].filter((c) => !search || [c.name, c.phone, c.description, c.email].some((v) => v && v.toLowerCase().includes(search)));
  const dir = order === 'ASC' ? 1 : -1;
  const key = (c: (typeof rows)[number]): string | number =>
    by === 'name' ? c.name.toLowerCase() : by === 'created_at' ? c.createdAt : by === 'updated_at' ? c.updatedAt : by === 'employees_number' ? c.employeesNumber : c.id;
  rows.sort((a, b) => (key(a) < key(b) ? -dir : key(a) > key(b) ? dir : (a.id - b.id) * dir));
  const offset = (paging.page - 1) * paging.perPage;
  const data = rows.slice(offset, offset + paging.perPage).map((c) => ({ ...ctx.ser.company(c, counts.total.get(`c:${c.id}`) ?? 0), owner: null }));
  return ok({ companies: paginator(ctx, paging, rows.length, data) });
}

function getCompany(ctx: RouteCtx): SimResponse {
  const c = ctx.state.companies.get(Number(ctx.params.id));
  if (!c) throw new SimError(404, 'rest_post_invalid_id', 'Invalid company ID; check the id.', { status: 404, body: { message: 'No query results for model [FluentCrm\\App\\Models\\Company].' } });
  const company = ctx.ser.company(c, ctx.state.counts().total.get(`c:${c.id}`) ?? 0);
  return ok({ company: ctx.real ? { ...company, owner: null } : company });
}

function createCompany(ctx: RouteCtx): SimResponse {
  const c = ctx.state.catalog.createCompany(ctx.body);
  const company = ctx.ser.company(c);
  // fluentcrm-2.9 echoes the new model before the database casts it: employees_number as sent (POST_companies).
  if (ctx.real && typeof ctx.body.employees_number === 'number') company.employees_number = ctx.body.employees_number;
  return ok({ company, message: 'Company has been created successfully' });
}

function updateCompany(ctx: RouteCtx): SimResponse {
  const c = ctx.state.catalog.updateCompany(Number(ctx.params.id), ctx.body);
  return ok({ company: ctx.ser.company(c), message: 'Company has been updated' });
}

function deleteCompany(ctx: RouteCtx): SimResponse {
  ctx.state.catalog.deleteCompany(Number(ctx.params.id));
  return ok({ message: 'Company has been deleted successfully' });
}

function attach(ctx: RouteCtx): SimResponse {
  const toIds = (v: unknown): number[] | undefined =>
    Array.isArray(v)
      ? v
          .slice(0, 10_000)
          .map(Number)
          .filter((n) => Number.isInteger(n) && n > 0)
      : undefined;
  const subscriberIds = toIds(ctx.body.subscriber_ids);
  const companyIds = toIds(ctx.body.company_ids);
  if (!subscriberIds || !companyIds || subscriberIds.length === 0 || companyIds.length === 0) {
    throw new SimError(400, 'rest_missing_callback_param', 'Missing parameter(s): subscriber_ids and company_ids (non-empty arrays) are required.', {
      status: 422,
      body: { subscriber_ids: { required: 'Subscriber ids are required' } },
    });
  }
  const changed = ctx.state.attachCompanies(subscriberIds, companyIds);
  if (ctx.real) {
    // fluentcrm-2.9 (POST_companies_attach-subscribers): the companies attached, without counts.
    const companies = companyIds.map((x) => ctx.state.companies.get(x)).filter((c) => c !== undefined);
    return ok({ message: 'Selected Companies has been attached successfully', companies: companies.map((c) => ctx.ser.company(c)) });
  }
  return ok({ message: 'Contacts have been attached to the companies', updated_count: changed });
}

/** fluentcrm-2.9 with its company module off: every company route is a 403, even for an admin. */
const moduleOn =
  (handler: RouteDef['handler']): RouteDef['handler'] =>
  (ctx) => {
    if (ctx.real && !ctx.state.companyModule) {
      throw new SimError(403, 'rest_forbidden', 'Sorry, you are not allowed to do that. Enable the company module (POST /setting/experiments).', {
        status: 403,
        body: { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } },
      });
    }
    return handler(ctx);
  };

/** Attaching is PUT in the interface and POST only in fluentcrm-2.9 (its route index): each mode serves its own. */
export const companyRoutes = (real: boolean): RouteDef[] => [
  { method: 'GET', path: '/companies', caps: CATS, handler: moduleOn(listCompanies) },
  { method: 'POST', path: '/companies', caps: CATS, handler: moduleOn(createCompany) },
  { method: real ? 'POST' : 'PUT', path: '/companies/attach-subscribers', caps: CATS, handler: moduleOn(attach) },
  { method: 'GET', path: '/companies/:id', caps: CATS, handler: moduleOn(getCompany) },
  { method: 'PUT', path: '/companies/:id', caps: CATS, handler: moduleOn(updateCompany) },
  { method: 'DELETE', path: '/companies/:id', caps: ['crm_manage_contact_cats_delete'], handler: moduleOn(deleteCompany) },
];
