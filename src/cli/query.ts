import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../logger.js';
import { describeOptionIssues } from './option-issues.js';
import { CatalogNotFoundError, WarehouseQueryError, withCatalog, type WarehouseSource } from '../warehouse/index.js';
import { formatRows } from '../warehouse/format-rows.js';
import { runQuery } from '../warehouse/run-query.js';

const OptionsSchema = z.object({
  format: z.enum(['table', 'csv', 'json', 'ndjson']),
  maxRows: z.coerce.number().int().min(1).max(10_000_000),
  quiet: z.boolean(),
});

/** `crmsync query "SQL"`: read-only SQL on the lake's catalog, also while a sync is writing. */
export function registerQueryCommand(program: Command): void {
  program
    .command('query')
    .description('Run read-only SQL against the warehouse (its catalog of the published Parquet lake; works while a sync runs)')
    .argument('<sql>', 'the SQL to run, e.g. "SELECT status, count(*) FROM contacts_current GROUP BY ALL"')
    .option('-f, --format <format>', 'table, csv, json or ndjson', 'table')
    .option('-n, --max-rows <n>', 'stop after this many rows', '10000')
    .option('-q, --quiet', 'do not say on stderr what was read', false)
    .action(async (sql: string, raw: Record<string, unknown>) => {
      const parsed = OptionsSchema.safeParse(raw);
      if (!parsed.success) {
        throw new ConfigError(`query: ${describeOptionIssues(parsed.error.issues, raw)}`);
      }
      const opts = parsed.data;
      const config = loadConfig();
      const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
      const say = (source: WarehouseSource) => {
        if (!opts.quiet) process.stderr.write(`${describeSource(source)}\n`);
      };
      // Before the first publish, SQL over files alone still runs; SQL over tables names the fix.
      const missing = !existsSync(config.catalogPath);
      const result = await withCatalog({ catalogPath: config.catalogPath, logger, whenMissing: 'empty' }, (r) => {
        if (missing) {
          if (!opts.quiet) process.stderr.write(`crmsync: no catalog at ${config.catalogPath} yet (run \`crmsync sync\` first); only files named in the query can be read\n`);
        } else say(r.source);
        return runQuery(r.connection, sql, opts.maxRows).catch((err: unknown) => {
          throw missing && err instanceof WarehouseQueryError ? new CatalogNotFoundError(config.catalogPath) : err;
        });
      });
      process.stdout.write(formatRows(result.columns, result.rows, opts.format));
      if (result.truncated) process.stderr.write(`crmsync: stopped after ${opts.maxRows} rows (raise --max-rows for more)\n`);
    });
}

export function describeSource(source: WarehouseSource): string {
  if (source.kind === 'duckdb') return `crmsync: reading ${source.path} (current)`;
  return `crmsync: reading the lake through ${source.path} (${source.publishedAt ? `published ${source.publishedAt}` : 'publish time unknown'})`;
}
