import type { RouteDef } from '../http-types.js';
export const reportRoutes: RouteDef[] = [];
