// Contacts that share an updated_at second across a page boundary of the updated-first scan.
// The CRM sorts by updated_at alone (fixtures/fluentcrm-2.9/site-ny/README.md: "There is no
// tie-breaker"), and a database may order tied rows differently for each LIMIT window, so the
// two pages around a boundary can repeat some of a tied group and leave others out. Where the
// group sits in the listing does not move (the rows newer and older than it are ordered), so one
// page that holds the whole group reads every member of it.

/** A group of rows sharing one updated_at, by their positions in the listing: [start, end). */
export interface TieGroup {
  ms: number;
  start: number;
  end: number;
}

/** Follows the scan's pages in order and names the tied groups that span a boundary. */
export class TieTracker {
  private position = 0;
  private runMs = Number.NaN;
  private runStart = 0;
  private crossed = false;
  private readonly groups: TieGroup[] = [];

  /** `cutoffMs`: groups older than it hold no row the scan loads, so they are not named. */
  constructor(private readonly cutoffMs: number) {}

  /** One page's rows' updated_at, in the order served. */
  page(updated: readonly number[]): void {
    updated.forEach((ms, i) => {
      if (ms !== this.runMs) {
        this.close();
        this.runMs = ms;
        this.runStart = this.position;
      } else if (i === 0) {
        this.crossed = true;
      }
      this.position++;
    });
  }

  /** The groups that span a boundary, once the scan has ended. */
  finish(): TieGroup[] {
    this.close();
    return this.groups;
  }

  private close(): void {
    if (this.crossed && this.runMs >= this.cutoffMs) this.groups.push({ ms: this.runMs, start: this.runStart, end: this.position });
    this.crossed = false;
  }
}

/**
 * The page (1-based, at `perPage` rows) that holds the group and `margin` rows either side of it,
 * the smallest such page; undefined when that needs more than `maxRows` rows.
 */
export function windowFor(g: TieGroup, maxRows: number, margin = 2): { page: number; perPage: number } | undefined {
  const lo = Math.max(0, g.start - margin);
  const hi = g.end + margin;
  for (let perPage = hi - lo; perPage <= maxRows; perPage++) {
    if (Math.floor(lo / perPage) === Math.floor((hi - 1) / perPage)) return { page: Math.floor(lo / perPage) + 1, perPage };
  }
  return undefined;
}
