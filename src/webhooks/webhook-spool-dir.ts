import { join } from 'node:path';
import type { Config } from '../config.js';

/** Where `webhooks serve` spools deliveries and the warehouse worker's apply activity reads them. */
export function webhookSpoolDir(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'webhook-spool');
}
