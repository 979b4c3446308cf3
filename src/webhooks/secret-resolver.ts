import { statSync } from 'node:fs';
import { z } from 'zod';
import { readFileUpTo } from '../read-file-up-to.js';
import { Secret } from '../secret.js';
import type { Logger } from '../logger.js';
import { WebhookSecretsError } from './errors.js';

/** The secrets file holds webhook ids and secrets: a larger one is a mistake, and is not read. */
export const MAX_SECRETS_FILE_BYTES = 1024 * 1024;
// The CRM accepts secrets of 8 to 256 characters; `register` generates 64 hex characters.
const secretValue = z.string().min(8, 'a webhook secret must have at least 8 characters').max(512);

/** `{ "<webhook id>": "secret" | ["current", "previous"] }`: two secrets per webhook during a rotation. */
export const WebhookSecretsFile = z.record(
  z.string().regex(/^\d{1,15}$/, 'keys are webhook ids'),
  // One secret, or a list of one or two (current first) during a rotation.
  z.preprocess(
    (v) => (typeof v === 'string' ? [v] : v),
    z
      .array(secretValue, { error: 'each webhook id maps to a secret or a list of one or two secrets' })
      .min(1, 'give at least one secret')
      .max(2, 'at most two active secrets per webhook (current and previous)'),
  ),
);
export type WebhookSecretsFile = z.infer<typeof WebhookSecretsFile>;

export interface SecretResolver {
  /** Secrets that may have signed a delivery for this webhook id; empty when the id is unknown. */
  secretsFor(webhookId: number): readonly Secret[];
  /**
   * Re-reads the file now if it changed (at most every 100 ms): called when a signature fails, so a
   * rotation written just before the CRM switched secrets is seen at once. True when it changed.
   */
  refresh(): boolean;
  /** How many webhook ids the file configures, and whether a catch-all secret is set. */
  describe(): { fileWebhooks: number; catchAll: boolean };
}

export interface SecretResolverOptions {
  /** CRM_WEBHOOK_SECRET: covers every webhook id the file does not list. */
  secret?: Secret | undefined;
  /** Path of the secrets file; re-read when it changes so a rotation needs no restart. */
  secretsFile?: string | undefined;
  /** Whether a missing file is an error (true when the user named the file). */
  fileRequired?: boolean;
  reloadIntervalMs?: number;
  logger?: Logger;
  now?: () => number;
}

/**
 * Reads the secrets file (null when it does not exist), refusing one over MAX_SECRETS_FILE_BYTES
 * unread. The error for a file that cannot be read keeps its `code` only: nothing of the file.
 */
export function readWebhookSecretsFile(path: string): Map<number, Secret[]> | null {
  let bytes: Buffer | null;
  try {
    bytes = readFileUpTo(path, MAX_SECRETS_FILE_BYTES);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT') return null;
    throw new WebhookSecretsError(`The webhook secrets file ${path} cannot be read (${code ?? 'error'}); check its permissions or fix CRMSYNC_WEBHOOK_SECRETS_FILE.`);
  }
  if (bytes === null) {
    throw new WebhookSecretsError(`The webhook secrets file ${path} is larger than 1 MiB; it should hold only webhook ids and secrets: rewrite it with \`crmsync webhooks register\`.`);
  }
  return parseWebhookSecretsFile(bytes.toString('utf8'), path);
}

/**
 * Parses the file's text. Its errors never quote the file: JSON.parse's message (kept out of
 * `cause` too) shows the text around the fault, and a misplaced secret can be a key zod names.
 */
export function parseWebhookSecretsFile(text: string, path: string): Map<number, Secret[]> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WebhookSecretsError(`The webhook secrets file ${path} is not valid JSON; rewrite it with \`crmsync webhooks register\`.`);
  }
  const parsed = WebhookSecretsFile.safeParse(json);
  if (!parsed.success) {
    const why = parsed.error.issues.map(describeIssue).join('; ');
    throw new WebhookSecretsError(`The webhook secrets file ${path} is invalid (${why}); expected {"<webhook id>": ["secret", "previous secret"]}.`);
  }
  const map = new Map<number, Secret[]>();
  for (const [id, secrets] of Object.entries(parsed.data))
    map.set(
      Number(id),
      secrets.map((s) => new Secret(s)),
    );
  return map;
}

export function createSecretResolver(options: SecretResolverOptions): SecretResolver {
  const { secret, secretsFile, logger } = options;
  const interval = options.reloadIntervalMs ?? 1_000;
  const now = options.now ?? Date.now;
  let map = new Map<number, Secret[]>();
  let stamp = '';
  let checkedAt = -Infinity;

  let refreshedAt = -Infinity;
  /** Returns true when new secrets were loaded. */
  const load = (initial: boolean): boolean => {
    if (!secretsFile) return false;
    let st;
    try {
      st = statSync(secretsFile);
    } catch (cause) {
      if (initial && options.fileRequired) {
        throw new WebhookSecretsError(`The webhook secrets file ${secretsFile} does not exist; run \`crmsync webhooks register --url ...\` or fix CRMSYNC_WEBHOOK_SECRETS_FILE.`, { cause });
      }
      if (stamp !== '') logger?.warn({ file: secretsFile }, 'webhook secrets file disappeared; keeping the secrets last read');
      return false;
    }
    const next = `${st.mtimeMs}:${st.size}:${st.ino}`;
    if (next === stamp) return false;
    try {
      const read = readWebhookSecretsFile(secretsFile);
      // Gone between the stat and the read: as if the stat had not found it (next time).
      if (read === null) return false;
      map = read;
      stamp = next;
      if (!initial) logger?.info({ file: secretsFile, webhooks: map.size }, 'webhook secrets reloaded');
      return true;
    } catch (err) {
      if (initial) throw err;
      logger?.warn({ file: secretsFile, code: (err as { code?: string }).code }, 'webhook secrets file is invalid; keeping the secrets last read');
      return false;
    }
  };

  load(true);
  if (!secret && !secretsFile) {
    throw new WebhookSecretsError('No webhook secret is configured: set CRM_WEBHOOK_SECRET, or run `crmsync webhooks register --url ...` to create a secrets file.');
  }

  return {
    secretsFor(webhookId) {
      const t = now();
      if (t - checkedAt >= interval) {
        checkedAt = t;
        try {
          load(false);
        } catch (err) {
          logger?.warn({ code: (err as { code?: string }).code }, 'webhook secrets reload failed');
        }
      }
      const fromFile = map.get(webhookId);
      if (fromFile) return fromFile;
      return secret ? [secret] : [];
    },
    refresh() {
      const t = now();
      if (t - refreshedAt < 100) return false;
      refreshedAt = t;
      checkedAt = t;
      try {
        return load(false);
      } catch {
        return false;
      }
    },
    describe: () => ({ fileWebhooks: map.size, catchAll: secret !== undefined }),
  };
}

/** An issue by where it is: a webhook id (a key that passed) and the secret's place, never a key that failed. */
function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_key') return 'a key is not a webhook id (keys are webhook ids, values their secrets)';
  const [id, index] = issue.path;
  const where = id === undefined ? '(file)' : index === undefined ? `webhook ${String(id)}` : `webhook ${String(id)}, secret ${Number(index) + 1}`;
  return `${where}: ${issue.message}`;
}
