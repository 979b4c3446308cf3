import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../logger.js';
import { publishLake, type PublishOptions } from './publish-lake.js';
import { inTransaction, readValue, run } from './sql-run.js';
import { quoteIdent } from './quote.js';
import { restoreDirtyParts, takeDirtyParts, type TakenParts } from './take-dirty-parts.js';

export interface LakePublisherDeps {
  instance: DuckDBInstance;
  /** The writer's connection: every write of the file goes through it. */
  connection: DuckDBConnection;
  lakePath: string;
  catalogPath?: string;
  sqlDir: string;
  logger?: Logger;
}

/**
 * The lake publishes of one warehouse file, one at a time (they number generations and rewrite
 * the manifest). A publish either runs on the writer's connection, or reads on a second one
 * beside the writes: a backfill's bucket publishes are mostly Parquet COPYs, and on the writer's
 * connection they held up every load behind them.
 */
export interface LakePublisher {
  /** Publishes on the writer's connection (as publishLake), after any publish beside has ended. */
  publish(tables?: readonly string[], options?: Pick<PublishOptions, 'buckets'>): Promise<void>;
  /** Takes the dirty marks of these buckets (on the writer's connection) for `publishBeside`. */
  take(tables: readonly string[], buckets: readonly number[]): Promise<TakenParts>;
  /**
   * Publishes taken partitions from one snapshot read on a second connection; writes nothing to
   * the file. When it fails the marks are kept, and put back by `restore` or the next `publish`.
   */
  publishBeside(taken: TakenParts): Promise<void>;
  /** Puts back the marks of failed publishes beside (on the writer's connection). */
  restore(): Promise<void>;
  /** Closes the second connection (the instance's owner closes the rest). */
  close(): void;
}

export function createLakePublisher(deps: LakePublisherDeps): LakePublisher {
  const { lakePath, catalogPath, sqlDir, logger } = deps;
  const ctxOf = (connection: DuckDBConnection) => ({ connection, lakePath, sqlDir, ...(catalogPath ? { catalogPath } : {}), ...(logger ? { logger } : {}) });
  let turn: Promise<unknown> = Promise.resolve();
  /** One publish after another, whatever the outcome of the one before. */
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = turn.then(fn);
    turn = result.catch(() => undefined);
    return result;
  };
  let beside: DuckDBConnection | undefined;
  const untaken: TakenParts[] = [];

  async function besideConnection(): Promise<DuckDBConnection> {
    if (beside) return beside;
    const database = String(await readValue(deps.connection, 'SELECT current_database()'));
    const connection = await deps.instance.connect();
    // As the writer's connection: timestamps in UTC, the attached file as the default catalog.
    await run(connection, `SET TimeZone = 'UTC'; USE ${quoteIdent(database)}`);
    beside = connection;
    return connection;
  }

  async function restore(): Promise<void> {
    while (untaken.length > 0) {
      await restoreDirtyParts(deps.connection, untaken[0]!);
      untaken.shift();
    }
  }

  return {
    publish: (tables, options) =>
      inTurn(async () => {
        await restore();
        await publishLake(ctxOf(deps.connection), tables, options);
      }),
    take: (tables, buckets) => takeDirtyParts(deps.connection, tables, buckets),
    publishBeside: (taken) =>
      inTurn(async () => {
        const tables = Object.keys(taken);
        if (tables.length === 0) return;
        try {
          const connection = await besideConnection();
          // One snapshot for all tables, so a contact's row and its history agree in the lake.
          await inTransaction(connection, () => publishLake(ctxOf(connection), tables, { taken }));
        } catch (err) {
          untaken.push(taken);
          throw err;
        }
      }),
    restore: () => inTurn(restore),
    close() {
      beside?.closeSync();
      beside = undefined;
    },
  };
}
