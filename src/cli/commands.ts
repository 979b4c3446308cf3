import type { Command } from 'commander';

/** A command whose module (and the heavy libraries it imports) loads only when it runs or help is shown. */
export interface LazyCommand {
  name: string;
  load: () => Promise<(program: Command) => void>;
  /**
   * How `crmsync --help` lists it (its usage term and description, as its module registers
   * them): the top-level help loads no command module. A test keeps both equal.
   */
  help: { term: string; description: string };
}

/**
 * Every command file exports a `register*Command(program)`; add new ones here. Lazy entries keep
 * a command from loading DuckDB, the Temporal worker and the others' modules it does not use
 * (`crmsync schedule list` needs the Temporal client only); a plain register function also works.
 */
export const commands: (LazyCommand | ((program: Command) => void))[] = [
  {
    name: 'query',
    load: async () => (await import('./query.js')).registerQueryCommand,
    help: { term: 'query [options] <sql>', description: 'Run read-only SQL against the warehouse (its catalog of the published Parquet lake; works while a sync runs)' },
  },
  {
    name: 'simulator',
    load: async () => (await import('./simulator.js')).registerSimulatorCommand,
    help: { term: 'simulator [options]', description: 'Serve the CRM simulator (seeded data, webhooks, faults) until interrupted.' },
  },
  {
    name: 'sync',
    load: async () => (await import('./sync.js')).registerSyncCommand,
    help: { term: 'sync [options]', description: 'Run one sync: a backfill the first time, incremental after (embedded Temporal and worker when TEMPORAL_ADDRESS is unset)' },
  },
  {
    name: 'worker',
    load: async () => (await import('./worker.js')).registerWorkerCommand,
    help: { term: 'worker [options]', description: 'Run the Temporal workers (workflows, and the one warehouse writer) until SIGINT or SIGTERM' },
  },
  {
    name: 'schedule',
    load: async () => (await import('./schedule.js')).registerScheduleCommand,
    help: { term: 'schedule', description: 'Scheduled incremental syncs as Temporal Schedules (overlapping runs are skipped)' },
  },
  {
    name: 'status',
    load: async () => (await import('./status.js')).registerStatusCommand,
    help: { term: 'status [options]', description: 'Per-stream freshness, cursors, row counts, last errors, and live progress of a running sync' },
  },
  {
    name: 'verify',
    load: async () => (await import('./verify.js')).registerVerifyCommand,
    help: { term: 'verify [options]', description: 'Compare the warehouse with the CRM (every row, typed column, custom value and membership); list the differences by kind; exit 1 on any' },
  },
  {
    name: 'demo',
    load: async () => (await import('./demo.js')).registerDemoCommand,
    help: { term: 'demo [options]', description: 'Start the simulator with seeded data, an embedded Temporal and a worker; run a full sync; show what landed' },
  },
  {
    name: 'webhooks',
    load: async () => (await import('./webhooks.js')).registerWebhooksCommand,
    help: { term: 'webhooks', description: "Receive the CRM's signed webhook events, or register the receiver with the CRM" },
  },
  {
    name: 'push',
    load: async () => (await import('./push.js')).registerPushCommand,
    help: { term: 'push [options]', description: 'Upsert rows defined in the warehouse into the CRM (a Temporal workflow; embedded when TEMPORAL_ADDRESS is unset)' },
  },
  {
    name: 'report',
    load: async () => (await import('./report.js')).registerReportCommand,
    help: { term: 'report [options]', description: "Write an HTML report (charts and their figures) of the warehouse and the sync's health; viewing it needs no network" },
  },
];
