import { Command, Help } from 'commander';
import { CrmsyncError } from '../errors.js';
import { setLogFormat } from '../logger.js';
import { commands } from './commands.js';
import { packageVersion } from './package-version.js';

/** Thin entry: each command lives in its own file and registers itself on the program. */
export async function main(argv: string[] = process.argv): Promise<void> {
  const program = new Command('crmsync')
    .description('Sync a contact and email-marketing CRM with a DuckDB and Parquet warehouse.')
    .version(packageVersion() ?? 'unknown (no package.json of crmsync above the CLI)', '-V, --version', 'print the version of crmsync')
    .option('--log-json', 'structured JSON logs on stderr also on a terminal (the default when stdout is not one)')
    .showHelpAfterError();
  program.hook('preAction', () => {
    if (program.opts<{ logJson?: boolean }>().logJson) setLogFormat('json');
  });
  try {
    // Only the command being run is loaded. Without one (`crmsync --help`) each is listed from
    // its help entry, loading none; `help <command>` and unknown commands load them all.
    const named = argv.slice(2).find((a) => !a.startsWith('-'));
    const lazy = commands.filter((c) => typeof c !== 'function');
    const only = lazy.find((c) => c.name === named);
    const listed = new Map<Command, string>();
    for (const c of commands) {
      if (typeof c === 'function') c(program);
      else if (named === undefined) listed.set(program.command(c.name).description(c.help.description), c.help.term);
      else if (!only || c === only) (await c.load())(program);
    }
    if (listed.size > 0) program.configureHelp({ subcommandTerm: (cmd) => listed.get(cmd) ?? new Help().subcommandTerm(cmd) });
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

/** Prints an error for a person (the message names the fix) and returns the exit code. */
export function reportError(err: unknown): number {
  if (err instanceof CrmsyncError) {
    process.stderr.write(`crmsync: ${err.message} [${err.code}]\n`);
    return 1;
  }
  process.stderr.write(`crmsync: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 70;
}
