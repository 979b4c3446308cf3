import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig, type Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { Secret } from '../secret.js';
import { startSimulator } from '../simulator/index.js';
import { quietTemporalRuntime } from '../sync/quiet-temporal-runtime.js';
import { runSync } from '../sync/run-sync.js';
import { STREAMS } from '../../workflows/streams.js';
import { withTemporal } from '../temporal/connect.js';
import { stopEmbeddedServer } from '../temporal/stop-embedded-server.js';
import { withInProcessWorkers } from '../worker/with-in-process-workers.js';
import { taskQueues } from '../temporal/task-queues.js';
import { CURRENT_CONTACTS_SAMPLE, DEMO_QUERY, runDemoQuery, tableRowCounts } from '../warehouse/demo-reads.js';
import { formatRows } from '../warehouse/format-rows.js';
import { withCatalog } from '../warehouse/index.js';
import type { SyncResult } from '../../workflows/sync-types.js';
import { createProgressRenderer } from './progress.js';
import { printSummary } from './sync.js';

export const DemoOptions = z.object({
  contacts: z.coerce.number({ error: '--contacts must be a number' }).int().min(1, '--contacts must be at least 1').max(2_000_000, '--contacts must be at most 2000000').default(5_000),
  seed: z.coerce.number({ error: '--seed must be a number' }).int().default(42),
});
export type DemoOptions = z.infer<typeof DemoOptions>;

const LANDED_TABLES = [
  'contacts',
  'contact_tags',
  'contact_lists',
  'tags',
  'lists',
  'custom_fields',
  'companies',
  'campaigns',
  'funnels',
  'funnel_subscribers',
  'report_overview',
  'report_campaign_email_stats',
  'report_automation_steps',
  '_sync_runs',
];

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('Start the simulator with seeded data, an embedded Temporal and a worker; run a full sync; show what landed')
    .option('--contacts <n>', 'seeded contacts', '5000')
    .option('--seed <s>', 'seed for the simulated data', '42')
    .action(async (raw: unknown) => {
      const parsed = DemoOptions.safeParse(raw);
      if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
      const config = loadConfig();
      await demoCommand(config, parsed.data, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, { cmd: 'demo' }));
    });
}

/**
 * The README's first command. Everything lives under `<data dir>/demo` (recreated each time), so
 * a real warehouse next to it is never touched; the simulator is in-process and stops at the end.
 */
export async function demoCommand(config: Config, opts: DemoOptions, logger: Logger, out: NodeJS.WriteStream = process.stdout): Promise<SyncResult> {
  const dir = join(config.dataDir, 'demo');
  // The last demo's embedded Temporal and worker may still linger (CRMSYNC_EMBEDDED_IDLE) on the
  // files about to be removed: stopped first, so this demo starts the only server of `dir`.
  await stopEmbeddedServer(dir);
  await rm(dir, { recursive: true, force: true });
  const sim = await startSimulator({ seed: opts.seed, contacts: opts.contacts });
  try {
    out.write(`simulated CRM with ${opts.contacts} contacts at ${sim.baseUrl}\n`);
    const demo: Config = {
      ...config,
      crm: { ...config.crm, baseUrl: sim.baseUrl, username: sim.credentials.username, password: new Secret(sim.credentials.password), allowInsecureHttp: true },
      dbPath: join(dir, 'crm.duckdb'),
      lakePath: join(dir, 'lake'),
      catalogPath: join(dir, 'lake', 'catalog.duckdb'),
      dataDir: dir,
      temporal: { ...config.temporal, taskQueue: 'crmsync-demo' },
    };
    quietTemporalRuntime(config.logLevel, logger);
    out.write(config.temporal.address ? `using Temporal at ${config.temporal.address}\n` : 'starting an embedded Temporal dev server and a worker...\n');
    const renderer = createProgressRenderer(out);
    const result = await withTemporal(
      demo,
      async (t) => {
        if (!t.nativeConnection) throw new Error('worker connection missing');
        // Its CRM is the simulator inside this command: the workers run here too, and stop with it.
        return await withInProcessWorkers({ config: demo, logger, client: t.client, nativeConnection: t.nativeConnection, namespace: t.namespace, linger: false }, () =>
          runSync({ client: t.client, taskQueues: taskQueues(demo), input: { streams: [...STREAMS], full: true }, onProgress: (p) => renderer.update(p) }),
        );
      },
      { worker: true },
    );
    printSummary(result, out);
    await withCatalog({ catalogPath: demo.catalogPath }, async (w) => {
      out.write('\nwhat landed:\n');
      for (const { table, rows } of await tableRowCounts(w, LANDED_TABLES)) {
        out.write(`  ${table.padEnd(30)} ${String(rows).padStart(8)} rows\n`);
      }
      out.write(`\nsample query:\n${DEMO_QUERY}\n\n`);
      const q = await runDemoQuery(w);
      out.write(formatRows(q.columns, q.rows, 'table'));
    });
    out.write(
      `\nthe warehouse is ${demo.dbPath} (Parquet lake in ${demo.lakePath}); query it with\n` +
        `  CRMSYNC_DB=${demo.dbPath} CRMSYNC_LAKE=${demo.lakePath} crmsync query "${CURRENT_CONTACTS_SAMPLE}"\n` +
        '(no `crmsync` command yet? `npm run install-cli` in the checkout installs one in ~/.local/bin)\n',
    );
    return result;
  } finally {
    await sim.close();
  }
}
