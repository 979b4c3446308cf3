import { CrmsyncError } from '../errors.js';

/** Another process holds the DuckDB file (the warehouse worker owns it while it runs). */
export class WarehouseLockedError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_LOCKED' as const;
  constructor(dbPath: string, options: { cause?: unknown } = {}) {
    super('WAREHOUSE_LOCKED', `The warehouse ${dbPath} is held by another process (a running \`crmsync worker\` owns it); read the published lake, or run the write through that worker.`, {
      retryable: true,
      retryAfterMs: 1_000,
      ...options,
    });
  }
}

/** A warehouse owner already holds the DuckDB file: a second one cannot open it. */
export class WarehouseOwnedError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_OWNED' as const;
  constructor(dbPath: string, holder: 'this process' | 'another process', options: { cause?: unknown } = {}) {
    super(
      'WAREHOUSE_OWNED',
      holder === 'this process'
        ? `A warehouse worker of this process already owns ${dbPath}; run writes as jobs on that owner instead of opening a second one.`
        : `Another crmsync worker owns ${dbPath}; stop it, or use it: commands join a running worker (\`crmsync sync\` and the others start none of their own while one polls the warehouse queue).`,
      options,
    );
  }
}

/** A write job came after the owner closed (the worker is shutting down); Temporal retries it on the next worker. */
export class WarehouseOwnerClosedError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_OWNER_CLOSED' as const;
  constructor(dbPath: string) {
    super('WAREHOUSE_OWNER_CLOSED', `The warehouse worker that owned ${dbPath} is shutting down; start \`crmsync worker\` again and the write is retried there.`, { retryable: true });
  }
}

/** A write was attempted on a handle opened for reading (a read-only file or the catalog). */
export class WarehouseReadOnlyError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_READ_ONLY' as const;
  constructor(operation: string) {
    super('WAREHOUSE_READ_ONLY', `${operation} needs a writable warehouse; open it with withWarehouse({ write: true }).`);
  }
}

export class WarehouseInputError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_INPUT_INVALID' as const;
  constructor(message: string) {
    super('WAREHOUSE_INPUT_INVALID', message);
  }
}

/**
 * A contact page DuckDB cannot read as JSON. Retryable, as the client's own `invalid_json` is: the
 * activity that fetched the page runs again and fetches it again (a garbled response rarely
 * repeats); a page that stays unreadable fails the run once Temporal's attempts are spent.
 */
export class WarehousePageUnreadableError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_PAGE_UNREADABLE' as const;
  constructor(message: string) {
    super('WAREHOUSE_PAGE_UNREADABLE', message, { retryable: true });
  }
}

/** DuckDB rejected an analyst's query (syntax, unknown table, a write on a read-only warehouse). */
export class WarehouseQueryError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_QUERY_FAILED' as const;
  constructor(detail: string, options: { cause?: unknown } = {}) {
    super('WAREHOUSE_QUERY_FAILED', `The query failed: ${detail} (crmsync query is read-only; list tables with "SHOW TABLES").`, options);
  }
}

export class MigrationError extends CrmsyncError {
  override readonly code = 'WAREHOUSE_MIGRATION_FAILED' as const;
  constructor(file: string, options: { cause?: unknown } = {}) {
    const detail = options.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('WAREHOUSE_MIGRATION_FAILED', `Migration ${file} failed${detail}; fix the SQL file (applied migrations are never edited: add a new numbered file).`, options);
  }
}

/** DuckDB reports a held file lock with this text; other failures to open are not retried. */
export function isDuckDbLockError(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /Could not set lock on file|Conflicting lock is held|database is locked/i.test(message);
}

/** `crmsync query` was given a statement that could write (COPY, ATTACH, INSTALL, EXPORT, SET, ...). */
export class WarehouseQueryNotReadOnlyError extends CrmsyncError {
  override readonly code = 'QUERY_NOT_READ_ONLY' as const;
  constructor(statement: string) {
    super(
      'QUERY_NOT_READ_ONLY',
      `crmsync query runs only SELECT statements (also DESCRIBE, SHOW, SUMMARIZE and VALUES); "${statement}" could write. ` +
        'Run writes with the duckdb CLI on a copy of the warehouse file, or export with `crmsync query -f csv "SELECT ..." > out.csv`.',
    );
  }
}

/** No catalog has been written yet: nothing was ever published to the lake at this place. */
export class CatalogNotFoundError extends CrmsyncError {
  override readonly code = 'CATALOG_NOT_FOUND' as const;
  constructor(catalogPath: string) {
    super(
      'CATALOG_NOT_FOUND',
      `No catalog at ${catalogPath}: nothing has been published to the lake yet; run \`crmsync sync\` first (it publishes the lake and writes the catalog), or set CRMSYNC_LAKE / CRMSYNC_CATALOG to where it was published.`,
    );
  }
}
