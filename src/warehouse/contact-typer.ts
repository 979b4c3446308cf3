import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { typeContactPages, type ContactPage, type TypedContactRows } from './load-contact-pages.js';
import { quoteIdent } from './quote.js';
import { run } from './sql-run.js';

/**
 * The in-memory database typed rows wait in for their load. Not the file: it keeps one writer,
 * the owner's connection, and a transaction of that connection may read this database but write
 * only the file's.
 */
export const TYPING_DATABASE = '_crmsync_typing';

/**
 * Types contact pages (`typeContactPages`) on a second connection of the writer's DuckDB instance,
 * into tables of TYPING_DATABASE, while the owner's connection loads, commits or publishes: two
 * connections' statements run on two threads even at `threads = 1`, and both share the instance's
 * memory limit. The typed rows are loaded by `loadTypedContactPages` on the owner's connection,
 * which drops them.
 */
export class ContactTyper {
  readonly #connection: DuckDBConnection;
  readonly #siteTimeZone: string;
  #tables = 0;

  private constructor(connection: DuckDBConnection, siteTimeZone: string) {
    this.#connection = connection;
    this.#siteTimeZone = siteTimeZone;
  }

  static async open(instance: DuckDBInstance, siteTimeZone: string): Promise<ContactTyper> {
    const connection = await instance.connect();
    try {
      // As the owner's connection: timestamps print and compare in UTC.
      await connection.run(`SET TimeZone = 'UTC'; ATTACH IF NOT EXISTS ':memory:' AS ${quoteIdent(TYPING_DATABASE)}`);
    } catch (err) {
      connection.closeSync();
      throw err;
    }
    return new ContactTyper(connection, siteTimeZone);
  }

  /** Types `pages` into a table of their own, for one `loadTypedContactPages`. */
  async typeContactPages(pages: readonly ContactPage[]): Promise<TypedContactRows> {
    this.#tables += 1;
    const typed = { table: `${quoteIdent(TYPING_DATABASE)}.main.${quoteIdent(`checked_${this.#tables}`)}`, temp: false };
    await typeContactPages(this.#connection, pages, typed, { siteTimeZone: this.#siteTimeZone });
    return typed;
  }

  /** Drops typed rows that will not be loaded. */
  async discard(typed: TypedContactRows): Promise<void> {
    await run(this.#connection, `DROP TABLE IF EXISTS ${typed.table}`);
  }

  close(): void {
    this.#connection.closeSync();
  }
}
