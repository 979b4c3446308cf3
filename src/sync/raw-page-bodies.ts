import type { RawPage, RowRef } from '../crm/types.js';
import type { ContactPage } from '../warehouse/load-contact-pages.js';

/** Which rows of a raw page to load (`ContactPage`'s filters). */
export interface RowsWanted {
  minId?: number;
  firstRows?: number;
}

/**
 * A raw page as the warehouse loads it: its body (as bytes), and any body re-read with it for rows that
 * slid back (their rows are among the page's), under `wanted`. `firstRows` counts the page's own
 * rows, so it is not applied to re-read bodies; a scan that asks for it does not re-read.
 */
export function rawPageBodies(p: RawPage, page: number, wanted: RowsWanted = {}): ContactPage[] {
  const { firstRows, ...rest } = wanted;
  const bytes = bodyBytes(p.body, p.rowSpans);
  const spans = bytes.rowSpans === undefined ? {} : { rowSpans: bytes.rowSpans };
  const own: ContactPage = { page, body: bytes.body, ...spans, ...rest, ...(firstRows === undefined ? {} : { firstRows }) };
  return [own, ...(p.alsoRead ?? []).map((body) => ({ page, body: bodyBytes(body).body, ...rest }))];
}

/** Rows of a raw page the load keeps under `minId`: ids above it, and ids it cannot read (rejected). */
export function rowsAbove(items: readonly RowRef[], minId: number): RowRef[] {
  return items.filter((r) => r.id === undefined || r.id > minId);
}

/**
 * A page body as UTF-8 bytes, and its row spans counted in bytes: the page waits for its load
 * outside V8's heap (a body of hundreds of KB is a string in V8's old generation once it has
 * waited a while, freed only by a full collection). The text came from the transport, so the bytes
 * are valid UTF-8 (its decoding already replaced bad bytes) and hold no byte-order mark.
 */
export function bodyBytes(body: string, rowSpans?: readonly number[]): { body: Buffer; rowSpans?: readonly number[] } {
  const bytes = Buffer.from(body, 'utf8');
  if (!rowSpans) return { body: bytes };
  // One byte per character: ASCII, as JSON with escaped non-ASCII characters is.
  if (bytes.length === body.length) return { body: bytes, rowSpans };
  const spans = new Array<number>(rowSpans.length);
  let at = 0;
  let offset = 0;
  for (let k = 0; k < rowSpans.length; k++) {
    offset += Buffer.byteLength(body.slice(at, rowSpans[k]));
    at = rowSpans[k]!;
    spans[k] = offset;
  }
  return { body: bytes, rowSpans: spans };
}
