import { z } from 'zod';
import { requireCrm, type Config } from '../config.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { readLakeFreshness, withCatalog } from '../warehouse/index.js';
import { retryDeadLettersThroughOwner } from './retry-dead-letters-through-owner.js';

export const DeadLettersOptions = z.object({
  retry: z.boolean().default(false),
  limit: z.coerce.number({ error: '--limit must be a number' }).int().min(1).max(1_000_000).default(100),
  json: z.boolean().default(false),
});

const oneLine = (s: string, max: number): string => {
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * `crmsync webhooks dead-letters`: lists the deliveries the applier set aside (oldest first), or
 * with `--retry` applies them again. Listing reads the lake's catalog, as `query` does, so it works
 * while a worker owns the DuckDB file (it shows the last publish). Retrying refetches through the
 * CRM, so it needs CRM_BASE_URL, CRM_USERNAME and CRM_PASSWORD, and runs on the warehouse worker
 * (the file's owner): a running `crmsync worker`, or workers this command starts on the embedded
 * default.
 */
export async function runDeadLetters(config: Config, opts: z.infer<typeof DeadLettersOptions>, logger: Logger, out: (s: string) => void): Promise<number> {
  if (!opts.retry) {
    const rows = await withCatalog({ catalogPath: config.catalogPath, logger }, async (r) => {
      // No copy in the lake yet: nothing was ever set aside, or the applier has not published since.
      if (!(await readLakeFreshness(r)).some((t) => t.table === 'webhook_dead_letters')) return [];
      return await r.webhooks.deadLetters({ limit: opts.limit });
    });
    if (opts.json) {
      for (const r of rows)
        out(
          `${JSON.stringify({ delivery_id: r.deliveryId, spool_seq: r.spoolSeq, event: r.event, reason: r.reason, error: r.error, attempts: r.attempts, first_failed_at: r.firstFailedAt.toISOString(), last_failed_at: r.lastFailedAt.toISOString() })}\n`,
        );
      return rows.length;
    }
    if (rows.length === 0) {
      out('No webhook dead letters: every stored delivery was applied.\n');
      return 0;
    }
    out(`${rows.length} webhook dead letter${rows.length === 1 ? '' : 's'} (oldest first${rows.length === opts.limit ? `, the first ${opts.limit}; --limit for more` : ''}):\n`);
    for (const r of rows) out(`  #${r.spoolSeq}  ${r.deliveryId}  ${r.event}  ${r.reason}  attempts ${r.attempts}  last ${r.lastFailedAt.toISOString()}\n    ${oneLine(r.error, 200)}\n`);
    out('Fix the cause (or the CRM record), then run `crmsync webhooks dead-letters --retry`.\n');
    return rows.length;
  }
  if (!config.crm.baseUrl) throw new ConfigError('webhooks dead-letters --retry refetches records from the CRM: set CRM_BASE_URL, CRM_USERNAME and CRM_PASSWORD.');
  requireCrm(config);
  const counts = { applied: 0, failed: 0, deferred: 0 };
  const results = await retryDeadLettersThroughOwner(config, opts.limit, logger, (part) => {
    for (const r of part) {
      counts[r.outcome]++;
      if (opts.json) out(`${JSON.stringify({ delivery_id: r.deliveryId, event: r.event, outcome: r.outcome, error: r.error })}\n`);
      else if (r.outcome !== 'applied') out(`  ${r.deliveryId}  ${r.event}  ${r.outcome}: ${oneLine(r.error ?? '', 200)}\n`);
    }
  });
  if (!opts.json)
    out(
      `Retried ${results.length} dead letter${results.length === 1 ? '' : 's'}: ${counts.applied} applied, ${counts.failed} failed again, ${counts.deferred} deferred (CRM or warehouse busy; run again later).\n`,
    );
  return counts.failed + counts.deferred;
}
