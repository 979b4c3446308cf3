/** How a contact sink (contact-sink.ts) batches pages, holds fetchers back and publishes the lake. */
export interface ContactSinkOptions {
  /**
   * Rows per `loadContacts` call at most (default 5,000). Larger loads cost less CPU per row, but
   * DuckDB's working set and the contacts held in the V8 heap grow with them. Larger loads did
   * not make a backfill faster (`bench/backfill.ts`, CPU-bound or with real latency, where the
   * writer is idle between pages), nor its peak lower (bench/results/notes.md, "load size").
   */
  maxRowsPerLoad?: number;
  /**
   * Rows held (queued plus loading) before `room()` makes fetchers wait (default 10,000, about
   * 50 MB of contact objects): a full batch loading while the next one fills.
   */
  maxHeldRows?: number;
  /**
   * The budget while the writer keeps up, i.e. fetchers have asked for room for a second and none
   * has waited at room() for `keepUpMs`, nor have loads run behind (WRITER_BEHIND_LOADS in
   * contact-sink.ts, which counts as a wait) (default: `maxHeldRows`, no such allowance). Where
   * the CRM is the bottleneck the writer still stops for a checkpoint or a lake publish (0.5-1 s
   * at 100k contacts), and with the plain budget every fetcher then waited until it had caught
   * up; the larger budget lets them go on through such a pause. Where the writer is the bottleneck, fetchers wait all the
   * time and the plain budget holds, so the memory the 1M peak counts does not grow.
   */
  keepUpHeldRows?: number;
  /** How long no fetcher must have waited for `keepUpHeldRows` to apply (default 5,000 ms). */
  keepUpMs?: number;
  /**
   * Publish the lake's contact buckets (id ranges, see CONTACT_BUCKET_SIZE) that no load has
   * touched for this long, while the scan goes on, whenever no page waits for a load (default
   * 2,000 ms; `false`: never, the run's final publish does it all). A backfill moves through the
   * id ranges in order, so by its end only the last buckets are left to publish, instead of the
   * whole lake after the last page (bench/results/notes.md, "cold buckets"). Only buckets below
   * every bucket still being loaded count as cold: the ranges run side by side, so a bucket above
   * a busy one is where that range's next pages go, and publishing it then meant writing it twice.
   */
  publishColdBucketsAfterMs?: number | false;
  /**
   * When the warehouse is the bottleneck (fetchers wait at `room()`, or loads run behind), pages
   * never stop waiting for a load, and every bucket was left to the run's final publish
   * (bench/results/notes.md, "cold buckets"). Then cold buckets are also published after this
   * many loads (default 8: ranges of 25,000 ids come whole about every five loads, and each
   * publish has fixed costs, so one range or two a publish). Not while the CRM is the
   * bottleneck: the writer is idle between pages, cold buckets go out in those gaps, and a
   * publish ahead of waiting pages would only delay the last ranges.
   */
  publishEveryLoads?: number;
  /**
   * A load starts once this many rows wait (default half of `maxRowsPerLoad`), or once the first
   * waiting page has waited `lingerMs`, or at `flush()`. When the CRM is the bottleneck, pages
   * come one by one, and a load for every one or two pages (each with its fixed cost) kept the
   * writer busy, so a lake publish held the fetchers back (bench/results/notes.md, "loads of a
   * page or two"). Where the writer is the bottleneck, a full load always waits.
   */
  minRowsPerLoad?: number;
  /** How long the first page waiting may wait for others to join its load (default 200 ms; 0: never). */
  lingerMs?: number;
  /**
   * While a load runs and a full load of raw pages waits, type those pages aside on the
   * warehouse's typing lane (`typeContactPagesAside`), so the next load only loads them (default
   * true). The two connections run on two cores at once; both share DuckDB's memory limit.
   */
  typeAside?: boolean;
  /** Told when a background publish fails (the buckets stay dirty for the run's final publish). */
  onPublishError?: (err: unknown) => void;
  /** Clock of the cold buckets and of `keepUpMs`, for tests (default `Date.now`); `lingerMs` is timed by timers. */
  now?: () => number;
}
