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
  // Unwrapped before JSON.stringify: a Secret's toJSON would hash every password alike.
  return createHash('sha256')
    .update(JSON.stringify(reveal(rest)))
    .digest('hex')
    .slice(0, 16);
}

function reveal(value: unknown): unknown {
  if (value instanceof Secret) return `secret:${value.reveal()}`;
  if (Array.isArray(value)) return value.map(reveal);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reveal(v)]));
  return value;
}
