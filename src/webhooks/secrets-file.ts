import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readWebhookSecretsFile } from './secret-resolver.js';

/** Where `register` writes secrets and `serve` reads them when CRMSYNC_WEBHOOK_SECRETS_FILE is unset. */
export function defaultSecretsFile(dataDir: string): string {
  return join(dataDir, 'webhook-secrets.json');
}

export function generateWebhookSecret(): string {
  return randomBytes(32).toString('hex');
}

/** The file's secrets per webhook id, current first; empty when the file does not exist. */
export function readSecretsFile(path: string): Map<number, string[]> {
  const parsed = readWebhookSecretsFile(path);
  if (parsed === null) return new Map();
  return new Map([...parsed].map(([id, secrets]) => [id, secrets.map((s) => s.reveal())]));
}

/** Replaces the file atomically (write, then rename) with owner-only permissions. */
export function writeSecretsFile(path: string, secrets: Map<number, string[]>): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const body = Object.fromEntries([...secrets].sort(([a], [b]) => a - b).map(([id, s]) => [String(id), s.slice(0, 2)]));
  writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600, flush: true });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
