import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { commands, type LazyCommand } from '../../src/cli/commands.js';
import { runCli } from './run-cli.js';

const lazy = commands.filter((c): c is LazyCommand => typeof c !== 'function');

// `crmsync --help` lists the commands from their help entries and loads no command module (it
// loaded all of them, DuckDB and the Temporal worker included): the listing must stay the one
// each module registers.
describe('crmsync --help without loading the commands', () => {
  it.each(lazy.map((c) => [c.name, c] as const))('the help entry of %s is what its module registers', async (_name, c) => {
    const program = new Command('crmsync');
    (await c.load())(program);
    const registered = program.commands.find((cmd) => cmd.name() === c.name);
    expect(registered, `${c.name} registers a command of that name`).toBeDefined();
    expect(c.help).toEqual({ term: new Help().subcommandTerm(registered!), description: registered!.description() });
  });

  it('prints the same help as `crmsync help`, which loads every command', { timeout: 120_000 }, async () => {
    const [listed, loaded] = await Promise.all([runCli(['--help'], {}), runCli(['help'], {})]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ {2}sync \[options\] +Run one sync/m);
    expect(listed.stdout).toBe(loaded.stdout);
  });
});
