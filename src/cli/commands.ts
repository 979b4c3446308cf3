import type { Command } from 'commander';
import { registerSimulatorCommand } from './simulator.js';
import { registerQueryCommand } from './query.js';
import { registerSyncCommand } from './sync.js';
import { registerWorkerCommand } from './worker.js';
import { registerScheduleCommand } from './schedule.js';
import { registerStatusCommand } from './status.js';
import { registerVerifyCommand } from './verify.js';
import { registerDemoCommand } from './demo.js';
import { registerWebhooksCommand } from './webhooks.js';
import { registerPushCommand } from './push.js';
import { registerReportCommand } from './report.js';

/** Every command file exports a `register*Command(program)`; add new ones here. */
export const commands: ((program: Command) => void)[] = [
  registerQueryCommand,
  registerSimulatorCommand,
  registerSyncCommand,
  registerWorkerCommand,
  registerScheduleCommand,
  registerStatusCommand,
  registerVerifyCommand,
  registerDemoCommand,
  registerWebhooksCommand,
  registerPushCommand,
  registerReportCommand,
];
