import { CrmsyncError } from '../errors.js';
import { NotFoundError } from '../crm/errors.js';

/** The warning a stream carries when the CRM lacks what it reads; the run still succeeds. */
export const NOT_AVAILABLE = 'not available on this CRM';

/** True when the CRM has no such route at all (404 rest_no_route): a module or plugin it lacks, not a missing record. */
export function isRouteMissing(err: unknown): boolean {
  return err instanceof NotFoundError && err.routeMissing;
}

/** The reason a small stream is not available on this CRM, or undefined when `err` is a real failure. */
export function unavailableReason(stream: string, err: unknown): string | undefined {
  // The company module is optional in the CRM: with it off, /companies answers 403 even for an
  // admin, in the same words as to a user without the capability, so the reason names both.
  if (stream === 'companies' && err instanceof CrmsyncError && err.code === 'CRM_FORBIDDEN')
    return `${NOT_AVAILABLE} (403 on /companies: the company module is off, or the API user lacks crm_manage_contact_cats; enable the module or grant the capability to sync companies)`;
  if (isRouteMissing(err)) return `${NOT_AVAILABLE} (${(err as NotFoundError).route ?? 'its route'} answers 404 rest_no_route)`;
  return undefined;
}

/**
 * A report route the CRM lacks although it has the other routes of the same kind (probed at the
 * start of the stream). Not a base-URL problem: every other stream reached the same CRM.
 */
export class ReportRouteMissingError extends CrmsyncError {
  constructor(route: string, kind: string, options: { cause?: unknown } = {}) {
    super(
      'SYNC_REPORT_ROUTE_MISSING',
      `The CRM has the ${kind} report routes but answers ${route} with 404 rest_no_route (a report its version or plugin lacks; CRM_BASE_URL is fine, the other routes answered): run \`crmsync sync --stream reports\` again to re-probe, or report the CRM version.`,
      options,
    );
  }
}
