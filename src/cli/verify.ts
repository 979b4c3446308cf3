import { retryOutsideTemporal } from '../crm/retry-outside-temporal.js';
import type { Command } from 'commander';
import { loadConfig, requireCrm, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { VerifyMismatchError } from '../sync/sync-errors.js';
import { resolveStreams } from '../sync/streams.js';
import { retryingVerifyClient } from '../verify/retrying-client.js';
import { runVerify, type VerifyResult } from '../verify/run-verify.js';
import type { VerifyProgress } from '../verify/verify-deps.js';
import { formatSummary, summarizeDifferences } from '../verify/summarize-differences.js';
import { withCatalog } from '../warehouse/index.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('Compare the warehouse with the CRM (every row, typed column, custom value and membership); list the differences by kind; exit 1 on any')
    .option('--stream <name>', 'verify only this stream (repeatable)', collect, [])
    .option('--json', 'print the result as JSON: {ok, streams, total, groups: [{stream, kind, count, examples}], skipped}')
    .action(async (raw: { stream: string[]; json?: boolean }) => {
      const result = await verifyCommand(loadConfig(), raw.stream, verifyProgressPrinter());
      const summary = summarizeDifferences(result.differences);
      if (raw.json) process.stdout.write(`${JSON.stringify({ ...summary, streams: result.streams, skipped: result.skipped }, null, 2)}\n`);
      else {
        process.stdout.write(formatSummary(summary, result.streams));
        for (const s of result.skipped) process.stdout.write(`not compared: ${s}\n`);
      }
      if (!summary.ok) throw new VerifyMismatchError(summary.total);
    });
}

/** Progress on stderr: a line when a stream starts and every tenth page of it, so long runs show life. */
export function verifyProgressPrinter(write: (line: string) => void = (line) => process.stderr.write(line)): (p: VerifyProgress) => void {
  let last = '';
  let pages = 0;
  return (p) => {
    pages = p.stream === last ? pages + 1 : 1;
    if (p.stream === last && pages % 10 !== 0) return;
    last = p.stream;
    write(`${formatVerifyProgress(p)}\n`);
  };
}

/**
 * `verify funnel_subscribers: funnel 2/4, page 1/2, 100 rows read`: rows count over the stream. An
 * empty listing answers `last_page: 0` on real sites, so its one page is `page 1/1`, not `1/0`.
 */
export function formatVerifyProgress(p: VerifyProgress): string {
  const listing = p.listing ? `${p.listing.noun} ${p.listing.done}/${p.listing.total}, ` : '';
  const of = p.pagesTotal !== undefined ? `/${Math.max(p.pagesTotal, p.pagesDone)}` : '';
  return `verify ${p.stream}: ${listing}page ${p.pagesDone}${of}, ${p.rows.toLocaleString('en-US')} rows read`;
}

/** Every difference between the warehouse and the CRM for the chosen streams (reports are snapshots: not compared). */
export async function verifyCommand(config: Config, streamsRequested: string[], onProgress?: (p: VerifyProgress) => void): Promise<VerifyResult> {
  requireCrm(config);
  const streams = resolveStreams(streamsRequested);
  const client = crmClientFromConfig(config);
  try {
    await retryOutsideTemporal(() => client.verifyCredentials());
    return await runVerify(
      {
        client: retryingVerifyClient(client),
        read: (fn) => withCatalog({ catalogPath: config.catalogPath }, fn),
        onProgress,
      },
      streams,
    );
  } finally {
    await client.close();
  }
}
