import type { DuckDBConnection } from '@duckdb/node-api';
import { checkTypedRows, typeContactPages, type CheckedRows, type ContactPage } from './load-contact-pages.js';
import { run } from './sql-run.js';

/** Contact pages typed aside (`TypingLane.type`), waiting for their load on the writer's connection. */
export interface TypedContactPages {
  /** The typed rows' table, in the instance's in-memory catalog. */
  readonly table: string;
  /** The pages' numbers, for errors. */
  readonly pages: readonly number[];
  /** The typed rows' figures, and each row a cheap check could not pass given its reason. */
  readonly checked: CheckedRows;
}

/**
 * The schema of the instance's own in-memory catalog (`memory`: the writer's instance is an
 * in-memory one with the file attached, open-warehouse.ts) where typed pages wait. Not the file's
 * catalog: nothing typed ahead is written to the file, and a process that stops loses only rows
 * whose pages are not in the page log yet, so a resumed scan fetches them again.
 */
const SCHEMA = 'memory._crmsync_typing';

/** A table name `TypingLane.type` gives (anything else handed back is refused, not spliced into SQL). */
export function isTypedTable(name: string): boolean {
  return /^memory\._crmsync_typing\.contacts_[0-9]+$/.test(name);
}

/**
 * A second connection of the writer's instance that types contact pages (`typeContactPages`: the
 * stage and the typing statement, the largest part of a load) into tables of the instance's
 * in-memory catalog, while the writer's connection loads, commits or publishes what came before.
 * The rows a cheap check could not pass are given their reasons here too (`checkTypedRows`). The
 * DuckDB file keeps its one writer: a load job of the owner reads the typed table in place
 * (`loadTypedContactPages`) and drops it. Calls run one at a time, in order; both connections share
 * the instance's memory limit and threads.
 */
export class TypingLane {
  readonly #connect: () => Promise<DuckDBConnection>;
  readonly #siteTimeZone: string;
  #connection: Promise<DuckDBConnection> | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #seq = 0;
  #closed = false;

  constructor(connect: () => Promise<DuckDBConnection>, siteTimeZone: string) {
    this.#connect = connect;
    this.#siteTimeZone = siteTimeZone;
  }

  /** Types `pages` into a fresh table; rejects as `loadContactPages` would for the same pages. */
  type(pages: readonly ContactPage[]): Promise<TypedContactPages> {
    const table = `${SCHEMA}.contacts_${++this.#seq}`;
    return this.#queue(async (c) => {
      try {
        await typeContactPages(c, pages, { table }, { siteTimeZone: this.#siteTimeZone });
        return { table, pages: pages.map((p) => p.page), checked: await checkTypedRows(c, table) };
      } catch (err) {
        // The typing statement and the delete of unasked rows run as one: the first may have left its table.
        await run(c, `DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
        throw err;
      }
    });
  }

  /** Drops a typed table that will not be loaded (its load job never ran). */
  drop(typed: TypedContactPages): Promise<void> {
    return this.#queue((c) => run(c, `DROP TABLE IF EXISTS ${typed.table}`));
  }

  /** Closes the connection once what is queued has run. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#tail.catch(() => undefined);
    const connection = await this.#connection?.catch(() => undefined);
    connection?.closeSync();
  }

  #queue<T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('The warehouse is closed; contact pages can no longer be typed on it.'));
    this.#connection ??= this.#open();
    const connection = this.#connection;
    const result = this.#tail.catch(() => undefined).then(async () => work(await connection));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  async #open(): Promise<DuckDBConnection> {
    const c = await this.#connect();
    try {
      // The in-memory catalog as the default: nothing this connection runs starts a transaction
      // on the file, which a checkpoint of the writer's connection would have to wait for.
      await c.run(`USE memory; CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      return c;
    } catch (err) {
      c.closeSync();
      throw err;
    }
  }
}
