import type { RouteCtx } from './http-types.js';
import { SimError, WP_CRITICAL_ERROR_BODY } from './sim-error.js';

/** Largest page served; a size limit on input even though fluentcrm-2.9 has none. */
export const MAX_PER_PAGE = 10_000;

export interface Paging {
  perPage: number;
  page: number;
}

/**
 * per_page and page as each mode reads them. Real mode reproduces fluentcrm-2.9's failures:
 * per_page 0 or non-numeric is a 500 (DivisionByZeroError), a negative one a 423 leaking SQL,
 * and page <= 0 is treated as 1. A `perPageCap` lowers what is served (and reported) in both modes.
 */
export function readPaging(ctx: RouteCtx, defaultPerPage: number): Paging {
  const rawPer = ctx.query.get('per_page');
  const rawPage = ctx.query.get('page');
  const defaultPer = ctx.real ? 15 : defaultPerPage;
  let perPage = defaultPer;
  if (rawPer !== null && rawPer !== '') {
    const n = Number(rawPer);
    if (ctx.real) {
      if (!Number.isFinite(n) || Math.trunc(n) === 0) {
        throw new SimError(500, 'internal_server_error', 'per_page must be a positive integer.', {
          status: 500,
          body: WP_CRITICAL_ERROR_BODY,
        });
      }
      if (n < 0) {
        throw new SimError(423, null, 'per_page must be positive.', {
          status: 423,
          body: {
            message: `You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '' at line 1 (SQL: select * from \`wp_fc_subscribers\` order by \`id\` desc offset 0)`,
          },
        });
      }
      perPage = Math.min(MAX_PER_PAGE, Math.trunc(n));
    } else {
      if (!Number.isInteger(n) || n < 1) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): per_page; use a positive integer (got "${rawPer.slice(0, 20)}").`);
      perPage = Math.min(MAX_PER_PAGE, n);
    }
  }
  let page = 1;
  if (rawPage !== null && rawPage !== '') {
    const n = Number(rawPage);
    if (ctx.real) page = Number.isFinite(n) && Math.trunc(n) >= 1 ? Math.trunc(n) : 1;
    else if (!Number.isInteger(n) || n < 1) throw new SimError(400, 'rest_invalid_param', `Invalid parameter(s): page; use an integer >= 1 (got "${rawPage.slice(0, 20)}").`);
    else page = n;
  }
  if (ctx.perPageCap !== undefined) perPage = Math.min(perPage, ctx.perPageCap);
  return { perPage, page };
}

/** The paginator envelope: total, per_page, current_page, last_page, next/prev_page_url, from, to, data. */
export function paginator(ctx: RouteCtx, paging: Paging, total: number, data: unknown[]): Record<string, unknown> {
  const lastPage = Math.ceil(total / paging.perPage);
  const from = data.length > 0 ? (paging.page - 1) * paging.perPage + 1 : null;
  const url = (page: number): string => {
    if (ctx.real) return `${ctx.basePath}${ctx.path}?page=${page}`;
    const q = new URLSearchParams(ctx.query);
    q.set('page', String(page));
    return `${ctx.origin}${ctx.basePath}${ctx.path}?${q.toString()}`;
  };
  return {
    total,
    per_page: paging.perPage,
    current_page: paging.page,
    last_page: ctx.real ? lastPage : Math.max(1, lastPage),
    next_page_url: paging.page < lastPage ? url(paging.page + 1) : null,
    prev_page_url: paging.page > 1 ? url(paging.page - 1) : null,
    from,
    to: from === null ? null : from + data.length - 1,
    data,
  };
}

/** `name[]=a&name[]=b`, also `name=a` and `name=a,b`. */
export function queryArray(q: URLSearchParams, name: string): string[] {
  const out = [...q.getAll(`${name}[]`), ...q.getAll(name)];
  const indexed = [...q.keys()].filter((k) => k.startsWith(`${name}[`) && k !== `${name}[]`);
  for (const k of new Set(indexed)) out.push(...q.getAll(k));
  return out
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export function queryBool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === '1' || v === 'true' || v === 'yes';
}
