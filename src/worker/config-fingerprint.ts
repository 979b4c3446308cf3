import { createHash } from 'node:crypto';
import type { Config } from '../config.js';
import { Secret } from '../secret.js';

/**
 * A hash of the configuration a worker serves with (CRM address and credentials, paths, task
 * queue...), the log level aside: a command configured otherwise replaces the background worker
 * rather than have its runs served with settings it did not ask for. Secrets enter only the hash.
 */
export function configFingerprint(config: Config): string {
  const { logLevel: _ignored, ...rest } = config;
  const text = JSON.stringify(rest, (_key, value: unknown) => (value instanceof Secret ? `secret:${value.reveal()}` : value));
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
