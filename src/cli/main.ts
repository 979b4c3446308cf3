import { Command } from 'commander';
import { CrmsyncError } from '../errors.js';
import { commands } from './commands.js';

/** Thin entry: each command lives in its own file and registers itself on the program. */
export async function main(argv: string[] = process.argv): Promise<void> {
  const program = new Command('crmsync')
    .description('Sync a contact and email-marketing CRM with a DuckDB and Parquet warehouse.')
    .showHelpAfterError();
  for (const register of commands) register(program);
  try {
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
