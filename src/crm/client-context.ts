import { CrmArgumentError } from './errors.js';
import type { Schemas } from './schemas/index.js';
import type { TimestampNormalizer } from './timestamps.js';
import type { Execute } from './request-executor.js';
import type { RouteMemory } from './route-choice.js';

/** What every resource module needs: the executor and the schemas for this client's time zone. */
export interface ClientContext {
  exec: Execute;
  schemas: Schemas;
  ts: TimestampNormalizer;
  timezone: string;
  /** Which route answered, for operations the interface and the real plugin route differently. */
  routes: RouteMemory;
}

/** `with[]`-style list options and per-page sizes are validated here, at the edge, before any request. */
export function checkPageQuery(q: { page: number; perPage: number }, route: string): void {
  if (!Number.isInteger(q.page) || q.page < 1) throw new CrmArgumentError(`${route}: page must be an integer >= 1, got ${q.page}`);
  // per_page 0 or negative makes the real server fail (500 division by zero, 423 SQL error).
  if (!Number.isInteger(q.perPage) || q.perPage < 1 || q.perPage > 5000) {
    throw new CrmArgumentError(`${route}: perPage must be an integer from 1 to 5000, got ${q.perPage}`);
  }
}

export function checkId(id: number, what: string): void {
  if (!Number.isSafeInteger(id) || id < 0) throw new CrmArgumentError(`${what} must be a non-negative integer id, got ${id}`);
}
