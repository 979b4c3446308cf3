import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerQueryCommand } from '../../src/cli/query.js';
import { registerReportCommand } from '../../src/cli/report.js';

// The readers open the lake's catalog, which never waits for a writer: no option may promise a wait.
describe('query and report options', () => {
  it.each([
    ['query', registerQueryCommand],
    ['report', registerReportCommand],
  ] as const)('%s offers no --wait-ms, and refuses it naming the option', async (name, register) => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    register(program);
    const command = program.commands.find((c) => c.name() === name)!;
    command.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    expect(command.options.map((o) => o.long)).not.toContain('--wait-ms');
    expect(command.helpInformation()).not.toMatch(/wait/i);
    const args = name === 'query' ? ['query', '--wait-ms', '5', 'SELECT 1'] : ['report', '--wait-ms', '5'];
    await expect(program.parseAsync(args, { from: 'user' })).rejects.toMatchObject({ code: 'commander.unknownOption', message: expect.stringContaining("'--wait-ms'") });
  });
});
