import type { RouteDef } from '../http-types.js';
export const marketingRoutes: RouteDef[] = [];
