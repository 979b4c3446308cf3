import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../logger.js';
import { describeOptionIssues } from './option-issues.js';
import { writeReport } from '../report/write-report.js';

const OptionsSchema = z.object({
  out: z.string().min(1, '--out needs a file name'),
  open: z.boolean(),
});

/** `crmsync report`: the warehouse and the sync's health as one self-contained HTML file. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description("Write an HTML report (charts and their figures) of the warehouse and the sync's health; viewing it needs no network")
    .option('-o, --out <file>', 'where to write the report', 'report.html')
    .option('--open', 'open the report in the default browser when written', false)
    .action(async (raw: Record<string, unknown>) => {
      const parsed = OptionsSchema.safeParse(raw);
      if (!parsed.success) throw new ConfigError(`report: ${describeOptionIssues(parsed.error.issues, raw)}`);
      const config = loadConfig();
      const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, { cmd: 'report' });
      const report = await writeReport({ catalogPath: config.catalogPath, out: parsed.data.out, now: new Date(), logger });
      process.stdout.write(`${report.path}\n`);
      process.stderr.write(
        `crmsync: wrote the report (${Math.ceil(report.bytes / 1024)} KiB) from ${report.source.kind === 'duckdb' ? report.source.path : `the Parquet lake's catalog ${report.source.path}`}\n`,
      );
      if (parsed.data.open) openInBrowser(report.path);
    });
}

/** Hands the file to the desktop's opener; a missing opener is a note, not a failure (the file is written). */
function openInBrowser(path: string): void {
  const [cmd, args] = process.platform === 'darwin' ? ['open', [path]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', path]] : ['xdg-open', [path]];
  const child = spawn(cmd, args as string[], { detached: true, stdio: 'ignore' });
  child.on('error', (err) => process.stderr.write(`crmsync: could not start ${cmd} (${err.message}); open ${path} in a browser yourself\n`));
  child.unref();
}
