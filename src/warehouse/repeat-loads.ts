import { createHash } from 'node:crypto';

/**
 * The rows of the last complete load of each table scope through one writer handle, as a digest,
 * so that loading the very same rows again is skipped: a merge of unchanged rows writes nothing
 * (load-rows.ts), yet costs the writer's queue a stage, a diff and a transaction, and a sync with
 * nothing new does that for every small stream and every funnel.
 *
 * Kept in memory and conservative, like WholeTableMarks: a new handle knows nothing, every other
 * load of a table forgets what was known of it (of its scope, or of all its scopes when it has
 * none), and a write the handle cannot name forgets everything. A skipped load is exact only if
 * nothing else wrote the table since; every writer of these tables goes through the handle's loads.
 */
export class RepeatLoads {
  readonly #last = new Map<string, string>();

  static digest(docs: readonly string[], siteTimeZone: string): string {
    const h = createHash('sha256').update(siteTimeZone);
    for (const d of docs) h.update('\n').update(d);
    return h.digest('base64');
  }

  /** True when `digest` is what the last complete load of `table` in `scope` wrote. */
  isRepeat(table: string, scope: string | undefined, digest: string): boolean {
    return this.#last.get(key(table, scope)) === digest;
  }

  /** A load of `table` in `scope` is about to run: what was known of that part is void. */
  loading(table: string, scope: string | undefined): void {
    if (scope === undefined) {
      for (const k of this.#last.keys()) if (k.startsWith(`${table}\n`)) this.#last.delete(k);
    } else this.#last.delete(key(table, scope));
  }

  /** A complete load of `table` in `scope` committed: the scope now holds exactly these rows. */
  loaded(table: string, scope: string | undefined, digest: string): void {
    this.#last.set(key(table, scope), digest);
  }

  forgetAll(): void {
    this.#last.clear();
  }
}

const key = (table: string, scope: string | undefined): string => `${table}\n${scope ?? ''}`;
