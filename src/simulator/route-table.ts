import type { RouteDef } from './http-types.js';
import type { SimulatorMode } from './options.js';
import { Router } from './router.js';
import { campaignRoutes, realCampaignRoutes } from './routes/campaigns.js';
import { companyRoutes } from './routes/companies.js';
import { contactRoutes } from './routes/contacts.js';
import { contentRoutes } from './routes/content.js';
import { formRoutes } from './routes/forms.js';
import { funnelRoutes } from './routes/funnels.js';
import { miscRoutes, realMiscRoutes, specMiscRoutes } from './routes/misc.js';
import { namespaceIndexRoute } from './routes/namespace-index.js';
import { realCampaignEditorRoutes } from './routes/real-campaigns.js';
import { realContactActivityRoutes } from './routes/real-contact-activity.js';
import { realContactLookupRoutes } from './routes/real-contact-lookups.js';
import { realContactWriteRoutes } from './routes/real-contact-writes.js';
import { realFunnelRoutes } from './routes/real-funnels.js';
import { reportRoutes } from './routes/reports.js';
import { taxonomyRoutes } from './routes/taxonomy.js';
import { webhookRoutes } from './routes/webhooks.js';

/** Every route of a mode, in registration order (which is also the order an Allow header lists methods in). */
export function routeDefs(mode: SimulatorMode): RouteDef[] {
  const real = mode === 'real';
  return [
    ...contactRoutes,
    ...taxonomyRoutes,
    ...companyRoutes(real),
    ...miscRoutes,
    ...(real ? [] : specMiscRoutes),
    ...webhookRoutes,
    ...campaignRoutes,
    ...funnelRoutes(real),
    ...contentRoutes(real),
    ...reportRoutes(real),
    ...(real
      ? [...realMiscRoutes, ...realCampaignRoutes, ...realCampaignEditorRoutes, ...realFunnelRoutes, ...realContactActivityRoutes, ...realContactWriteRoutes, ...realContactLookupRoutes]
      : formRoutes),
  ];
}

/**
 * The router of a mode without the routes under the `unavailable` prefixes: a CRM without some
 * modules, whose routes answer 404 rest_no_route like any unknown route.
 */
export function buildRouter(mode: SimulatorMode, unavailable: readonly string[] = []): Router {
  const absent = (path: string): boolean => unavailable.some((p) => path === p || path.startsWith(`${p}/`));
  const defs = routeDefs(mode).filter((r) => !absent(r.path));
  const router = new Router().add(defs);
  if (mode !== 'real') return router;
  // WordPress's index of the namespace, listing what this router serves.
  const paths = defs.map((d) => d.path);
  return router.add([namespaceIndexRoute(router, paths)]);
}
