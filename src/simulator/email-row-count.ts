import type { CampaignRec } from './model.js';

/** Sending is over: recipients left without an email row stay so (see emailRowCount). */
const FINISHED = new Set(['sent', 'archived']);

/**
 * The campaign's email rows: the plugin's `stats.total` counts them, the `emails` paginator lists
 * them. A finished campaign has a row per email sent, and its recipients_count may count more
 * (site-ny campaign 1: 493 recipients, 492 rows, no failed row); one still sending also has a
 * pending row per email left. Apart from campaign-emails.ts, so the serializer can use it too.
 */
export function emailRowCount(c: CampaignRec): number {
  return FINISHED.has(c.status) ? c.stats.sent : Math.max(c.stats.sent, c.recipientsCount);
}
