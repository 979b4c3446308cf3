import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerSyncCommand } from '../../src/cli/sync.js';
import { DEFAULT_TUNING } from '../../workflows/sync-types.js';

// `crmsync sync --help` showed no default for --per-page or --parallelism.
describe('crmsync sync --help', () => {
  it('shows the defaults the workflow takes for the tuning options it leaves unset', () => {
    const program = new Command();
    registerSyncCommand(program);
    const sync = program.commands.find((c) => c.name() === 'sync')!;
    // One line per option: commander wraps at the terminal width, so the width is pinned.
    const help = sync
      .configureOutput({ getOutHelpWidth: () => 200 })
      .helpInformation()
      .replace(/\s+/g, ' ');
    expect(help).toContain(`--per-page <n> contacts per page request (default: ${DEFAULT_TUNING.perPage})`);
    expect(help).toContain(`--parallelism <n> page ranges fetched at once (default: ${DEFAULT_TUNING.parallelism})`);
    expect(help).toContain(`incremental runs (default: ${DEFAULT_TUNING.sweepRuns})`);
    // Shown only: an option left out is not sent, so the worker's own defaults apply.
    for (const long of ['--per-page', '--parallelism', '--sweep-runs']) expect(sync.options.find((o) => o.long === long)?.defaultValue, long).toBeUndefined();
  });
});
