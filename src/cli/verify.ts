import type { Command } from 'commander';
import { loadConfig, requireCrm, type Config } from '../config.js';
import { crmClientFromConfig } from '../crm/index.js';
import { VerifyMismatchError } from '../sync/sync-errors.js';
import { resolveStreams } from '../sync/streams.js';
import { verifyContacts, verifyEntities, type Difference } from '../sync/verify.js';
import type { WarehouseSession } from '../sync/warehouse-port.js';
import { withWarehouse } from '../warehouse/index.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('Compare the warehouse with the CRM (counts, id sets, fields); list every difference; exit 1 on any')
    .option('--stream <name>', 'verify only this stream (repeatable)', collect, [])
    .option('--json', 'print differences as JSON')
    .action(async (raw: { stream: string[]; json?: boolean }) => {
      const diffs = await verifyCommand(loadConfig(), raw.stream);
      if (raw.json) process.stdout.write(`${JSON.stringify(diffs, null, 2)}\n`);
      else {
        for (const d of diffs) process.stdout.write(`${d.stream}\t${d.kind}\t${d.detail}\n`);
        if (diffs.length === 0) process.stdout.write('the warehouse matches the CRM\n');
      }
      if (diffs.length > 0) throw new VerifyMismatchError(diffs.length);
    });
}

/** Every difference between the warehouse and the CRM for the chosen streams (reports are snapshots: not compared). */
export async function verifyCommand(config: Config, streamsRequested: string[]): Promise<Difference[]> {
  requireCrm(config);
  const streams = resolveStreams(streamsRequested).filter((s) => s !== 'reports');
  const client = crmClientFromConfig(config);
  const read = <T>(fn: (w: WarehouseSession) => Promise<T>): Promise<T> => withWarehouse({ dbPath: config.dbPath, lakePath: config.lakePath, write: false }, fn);
  try {
    await client.verifyCredentials();
    const diffs: Difference[] = [];
    if (streams.includes('contacts')) diffs.push(...(await verifyContacts(client, read)));
    diffs.push(...(await verifyEntities(client, read, streams)));
    return diffs;
  } finally {
    await client.close();
  }
}
