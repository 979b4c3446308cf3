import type { RouteDef, SimResponse } from './http-types.js';
import type { SimulatorUser } from './options.js';
import type { Router } from './router.js';

/**
 * fluentcrm-2.9's methods, in its order, on the paths where real mode registers others: methods
 * real mode does not serve (creation of campaigns and funnels, bulk deletes, ...) or serves only
 * because spec mode has them. From the plugin's route index (GET_wp-json_namespace_fluent-crm_v2)
 * and the Allow headers of the captures; every other path's list is derived from the routes the
 * simulator registers on it.
 */
const PLUGIN_METHODS: Readonly<Record<string, readonly string[]>> = {
  '/subscribers': ['GET', 'POST', 'DELETE'],
  '/subscribers/:id/notes/:noteId': ['PUT', 'DELETE'],
  '/custom-fields/contacts': ['GET', 'PUT'],
  '/campaigns': ['GET', 'POST'],
  '/campaigns/:id': ['GET', 'PUT', 'DELETE'],
  '/campaigns/:id/emails': ['GET', 'DELETE'],
  '/funnels': ['GET', 'POST'],
  '/funnels/:id': ['GET', 'PUT', 'DELETE'],
  '/funnels/:id/sequences': ['POST'],
  '/templates/:id': ['GET', 'PUT', 'DELETE'],
  '/setting/experiments': ['GET', 'POST'],
};

const permits = (def: RouteDef, user: SimulatorUser | undefined): boolean => def.caps.length === 0 || (user !== undefined && def.caps.some((c) => user.capabilities.includes(c)));

/**
 * The Allow header of a routed request. Spec mode: every method registered on the path. Real
 * mode, as WordPress computes it (rest_send_allow_header): the route's methods whose permission
 * check the caller passes, in registration order, and no header when none passes (the captured
 * 401s and the editor's 403s). A method real mode does not serve has no capability of its own
 * here: it is listed when the caller may use the route at all.
 */
export function allowHeader(router: Router, path: string, real: boolean, user: SimulatorUser | undefined): string | undefined {
  const defs = router.onPath(path);
  if (!real) return [...new Set(defs.map((d) => d.method))].join(', ');
  const permitted: string[] = [...new Set(defs.filter((d) => permits(d, user)).map((d) => d.method))];
  if (permitted.length === 0) return undefined;
  const plugin = PLUGIN_METHODS[path];
  const methods = plugin ? plugin.filter((m) => permitted.includes(m) || !defs.some((d) => d.method === m)) : permitted;
  return methods.length > 0 ? methods.join(', ') : undefined;
}

/**
 * Whether a real-mode answer came from a matched route's handler, the answers WordPress adds
 * Allow to: not when no route matched after all (rest_no_route), when every method's permission
 * check fails (rest_forbidden, the company module off), or after a fatal error (5xx).
 */
export function routeAnswered(out: SimResponse): boolean {
  if (out.status >= 500) return false;
  const code = out.body !== null && typeof out.body === 'object' ? (out.body as { code?: unknown }).code : undefined;
  return code !== 'rest_no_route' && code !== 'rest_forbidden';
}
