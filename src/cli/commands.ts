import type { Command } from 'commander';

/** A command whose module (and the heavy libraries it imports) loads only when it runs or help is shown. */
export interface LazyCommand {
  name: string;
  load: () => Promise<(program: Command) => void>;
}

/**
 * Every command file exports a `register*Command(program)`; add new ones here. Lazy entries keep
 * a command from loading DuckDB, the Temporal worker and the others' modules it does not use
 * (`crmsync schedule list` needs the Temporal client only); a plain register function also works.
 */
export const commands: (LazyCommand | ((program: Command) => void))[] = [
  { name: 'query', load: async () => (await import('./query.js')).registerQueryCommand },
  { name: 'simulator', load: async () => (await import('./simulator.js')).registerSimulatorCommand },
  { name: 'sync', load: async () => (await import('./sync.js')).registerSyncCommand },
  { name: 'worker', load: async () => (await import('./worker.js')).registerWorkerCommand },
  { name: 'schedule', load: async () => (await import('./schedule.js')).registerScheduleCommand },
  { name: 'status', load: async () => (await import('./status.js')).registerStatusCommand },
  { name: 'verify', load: async () => (await import('./verify.js')).registerVerifyCommand },
  { name: 'demo', load: async () => (await import('./demo.js')).registerDemoCommand },
  { name: 'webhooks', load: async () => (await import('./webhooks.js')).registerWebhooksCommand },
  { name: 'push', load: async () => (await import('./push.js')).registerPushCommand },
  { name: 'report', load: async () => (await import('./report.js')).registerReportCommand },
];
