import { contactEmailsBody, deleteEmailRows } from '../campaign-emails.js';
import { contactUrlMetricsBody } from '../campaign-links.js';
import type { RouteDef } from '../http-types.js';
import { ok } from '../http-types.js';
import { SimError } from '../sim-error.js';

const READ = ['crm_read_contacts', 'crm_manage_contacts'];
const WRITE = ['crm_manage_contacts'];

/** The support-tickets table's columns as the plugin describes them with an empty list (site-ny capture). */
const TICKET_COLUMNS = {
  id: { label: 'ID', width: '100px' },
  status: { label: 'Status', width: '120px' },
  'Submitted at': { label: 'Submitted at', width: '150px' },
  action: { label: 'Action', width: '150px' },
};

/**
 * The contact profile's activity panels of fluentcrm-2.9 that read other plugins (forms, shops,
 * help desks) or a module that is off by default (the event tracker). The site-ny captures answer
 * each with its empty envelope, or 422 for the tracker; the simulator has none of those plugins, so
 * it answers the same for every contact. Like the notes listing, they do not look the contact up:
 * an unknown id gets the same answer. The contact's `emails` are its rows of the campaign email
 * rows (campaign-emails.ts) and its `url-metrics` the links its clicked rows went to
 * (campaign-links.ts); that one looks the contact up first, as the plugin's findOrFail does.
 */
export const realContactActivityRoutes: RouteDef[] = [
  { method: 'GET', path: '/subscribers/:id/emails', caps: READ, handler: (ctx) => ok(contactEmailsBody(ctx, Number(ctx.params.id))) },
  { method: 'DELETE', path: '/subscribers/:id/emails', caps: WRITE, handler: (ctx) => ok(deleteEmailRows(ctx, Number(ctx.params.id))) },
  { method: 'GET', path: '/subscribers/:id/url-metrics', caps: READ, handler: (ctx) => ok(contactUrlMetricsBody(ctx, Number(ctx.params.id))) },
  { method: 'GET', path: '/subscribers/:id/form-submissions', caps: READ, handler: () => ok({ submissions: { data: [], total: 0 } }) },
  { method: 'GET', path: '/subscribers/:id/info-widgets', caps: READ, handler: () => ok({ widgets: { top_widgets: [], other_widgets: [], widgets_count: 0 } }) },
  { method: 'GET', path: '/subscribers/:id/purchase-history', caps: READ, handler: () => ok({ orders: { orders: [], total: 0 } }) },
  { method: 'GET', path: '/subscribers/:id/support-tickets', caps: READ, handler: () => ok({ tickets: { data: [], total: 0, columns_config: TICKET_COLUMNS } }) },
  {
    method: 'GET',
    path: '/subscribers/:id/tracking-events',
    caps: READ,
    handler: () => {
      throw new SimError(422, 'not_enabled', 'Event Tracker is not enabled', { status: 422, body: { message: 'Event Tracker is not enabled', error_code: 'not_enabled' } });
    },
  },
];
