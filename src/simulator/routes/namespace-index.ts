import { allowHeader } from '../allow-header.js';
import type { RouteCtx, RouteDef, SimResponse } from '../http-types.js';
import { ok } from '../http-types.js';
import { ALL_CAPABILITIES } from '../options.js';
import type { Router } from '../router.js';

/** The route WordPress answers `GET /wp-json/fluent-crm/v2` with, below the base path. */
export const NAMESPACE_INDEX_PATH = '/';

/** Who may call every route: the index lists each route's methods whatever the caller may use. */
const EVERYONE = { username: '(index)', password: '', capabilities: [...ALL_CAPABILITIES] };

/**
 * Catch-all paths as the index names them: the bounce handler's stands for the plugin's two
 * routes, listed as captured (one endpoint taking every method); the report catch-all answers
 * rest_no_route, so it is no route.
 */
const BOUNCE = '/public/bounce_handler/(?P<service_name>[a-zA-Z0-9-_]+)';
const WILDCARDS: Record<string, string[]> = { '/public/bounce_handler/*': [`${BOUNCE}/handle/(?P<security_code>[a-zA-Z0-9-_]+)`, `${BOUNCE}/(?P<security_code>[a-zA-Z0-9-_]+)`] };
const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** `/subscribers/:id/notes/:noteId` as WordPress lists it: `/subscribers/(?P<id>[0-9]+)/notes/(?P<note_id>[0-9]+)`. */
const wpPattern = (path: string): string => path.replace(/:([A-Za-z]+)/g, (_, k: string) => `(?P<${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}>[0-9]+)`);

function argsOf(pattern: string): Record<string, { required: true }> | [] {
  const names = [...pattern.matchAll(/\(\?P<([a-z_]+)>/g)].map((m) => m[1] as string);
  return names.length === 0 ? [] : Object.fromEntries(names.map((n) => [n, { required: true as const }]));
}

/**
 * WordPress's namespace index (GET_wp-json_namespace_fluent-crm_v2), built from the routes this
 * router serves: each with the methods its Allow header names (the plugin's, where they differ)
 * and one endpoint per method, `_links.self` on routes without parameters. It lists the
 * simulator's routes, not the plugin's 167: the plugin's others are not served. Without
 * `__bench`, as captured.
 */
export function namespaceIndexRoute(router: Router, paths: readonly string[]): RouteDef {
  const handler = (ctx: RouteCtx): SimResponse => {
    const namespace = ctx.basePath.replace(/^\/wp-json\//, '');
    const root = `${ctx.origin}/wp-json/`;
    const entry = (pattern: string, methods: string[], endpoints: Array<{ methods: string[]; args: unknown }>): Record<string, unknown> => ({
      namespace,
      methods,
      endpoints,
      ...(pattern.includes('(?P<') ? {} : { _links: { self: [{ href: `${root}${namespace}${pattern}` }] } }),
    });
    const args = { namespace: { default: namespace, required: false }, context: { default: 'view', required: false } };
    const routes: Record<string, unknown> = { [`/${namespace}`]: entry('', ['GET'], [{ methods: ['GET'], args }]) };
    for (const path of new Set(paths)) {
      if (path.endsWith('*')) {
        for (const p of WILDCARDS[path] ?? []) routes[`/${namespace}${p}`] = entry(p, ALL_METHODS, [{ methods: ALL_METHODS, args: argsOf(p) }]);
        continue;
      }
      const methods = (allowHeader(router, path, true, EVERYONE) ?? '').split(', ').filter(Boolean);
      const p = wpPattern(path);
      routes[`/${namespace}${p}`] = entry(
        p,
        methods,
        methods.map((m) => ({ methods: [m], args: argsOf(p) })),
      );
    }
    return ok({ namespace, routes, _links: { up: [{ href: root }] } });
  };
  return { method: 'GET', path: NAMESPACE_INDEX_PATH, caps: [], handler, bench: false };
}
