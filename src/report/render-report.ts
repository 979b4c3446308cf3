import type { ReportData } from '../warehouse/report-data.js';
import { campaignSection } from './campaign-section.js';
import { esc, fmtInt, fmtTime } from './format.js';
import { funnelSection } from './funnel-section.js';
import { growthSection } from './growth-section.js';
import { REPORT_SCRIPT } from './report-script.js';
import { REPORT_STYLE } from './report-style.js';
import { syncHealthSection } from './sync-health-section.js';
import { taxonomySection } from './taxonomy-section.js';
import { webhookSection } from './webhook-section.js';

export interface RenderReportOptions {
  /** When the report is made: the freshness ages count from here. */
  now: Date;
  /** What was read, in words (the DuckDB file, or the lake and when it was published). */
  source: string;
}

// Nothing may leave the page: no fetch, no image, font or frame from anywhere but the page itself.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const SECTIONS = [
  ['growth', 'Subscriber growth'],
  ['campaigns', 'Campaigns'],
  ['funnels', 'Funnels'],
  ['taxonomy', 'Tags and lists'],
  ['sync-health', 'Sync health'],
  ['webhooks', 'Webhooks'],
] as const;

/** The whole report as one self-contained HTML document (inline style, script and SVG; no network). */
export function renderReport(data: ReportData, opts: RenderReportOptions): string {
  const contacts = data.growth.filter((r) => r.period === 'month');
  const last = contacts.length ? contacts[contacts.length - 1]!.period_start : null;
  const total = contacts.filter((r) => r.period_start === last).reduce((a, r) => a + r.total_contacts, 0);
  const missing = data.missingViews.length
    ? `<p class="warn">Not in this warehouse: ${esc(data.missingViews.join(', '))}. Their sections are empty; a <code>crmsync sync</code> with this version creates them.</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>crmsync report ${esc(fmtTime(opts.now))} UTC</title>
<style>${REPORT_STYLE}</style></head>
<body><main>
<header><h1>crmsync report</h1>
<p>Made ${esc(fmtTime(opts.now))} UTC from ${esc(opts.source)}.</p>
<p>${esc(fmtInt(total))} live contacts with a creation date.</p>${missing}</header>
<nav><ul>${SECTIONS.map(([id, label]) => `<li><a href="#${id}">${label}</a></li>`).join('')}</ul></nav>
${growthSection(data.growth)}
${campaignSection(data.campaigns)}
${funnelSection(data.funnels)}
${taxonomySection(data.taxonomy)}
${syncHealthSection(data, opts.now)}
${webhookSection(data.webhooks)}
</main><script>${REPORT_SCRIPT}</script></body></html>
`;
}
