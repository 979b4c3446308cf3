import type { RawPage, RowRef } from '../crm/types.js';
import type { ContactPage } from '../warehouse/load-contact-pages.js';

/** Which rows of a raw page to load (`ContactPage`'s filters). */
export interface RowsWanted {
  minId?: number;
  firstRows?: number;
}

/**
 * A raw page as the warehouse loads it: its body, and any body re-read with it for rows that
 * slid back (their rows are among the page's), under `wanted`. `firstRows` counts the page's own
 * rows, so it is not applied to re-read bodies; a scan that asks for it does not re-read.
 */
export function rawPageBodies(p: RawPage, page: number, wanted: RowsWanted = {}): ContactPage[] {
  const { firstRows, ...rest } = wanted;
  const spans = p.rowSpans === undefined ? {} : { rowSpans: p.rowSpans };
  const own: ContactPage = { page, body: p.body, ...spans, ...rest, ...(firstRows === undefined ? {} : { firstRows }) };
  return [own, ...(p.alsoRead ?? []).map((body) => ({ page, body, ...rest }))];
}

/** Rows of a raw page the load keeps under `minId`: ids above it, and ids it cannot read (rejected). */
export function rowsAbove(items: readonly RowRef[], minId: number): RowRef[] {
  return items.filter((r) => r.id === undefined || r.id > minId);
}
