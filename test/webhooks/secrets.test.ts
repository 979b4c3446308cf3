import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { createSecretResolver, MAX_SECRETS_FILE_BYTES } from '../../src/webhooks/secret-resolver.js';
import { readSecretsFile } from '../../src/webhooks/secrets-file.js';
import { withTempDir } from './helpers.js';

/** Everything an error could show: its message, its cause chain, inspect and JSON. */
function everyRendering(e: unknown): string {
  const parts = [String(e), inspect(e, { depth: 6 }), JSON.stringify(e)];
  for (let c = (e as { cause?: unknown })?.cause; c; c = (c as { cause?: unknown }).cause) parts.push(String(c), inspect(c));
  return parts.join('\n');
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('webhook secrets configuration', () => {
  it('refuses to start without any secret, or with a malformed or missing named file, naming the fix', async () => {
    await withTempDir(async (dir) => {
      expect(() => createSecretResolver({})).toThrow(/CRM_WEBHOOK_SECRET/);
      expect(() => createSecretResolver({ secretsFile: join(dir, 'absent.json'), fileRequired: true })).toThrow(/webhooks register/);
      const file = join(dir, 's.json');
      for (const [content, why] of [
        ['{not json', /not valid JSON/],
        ['{"abc": "long-enough-secret"}', /a key is not a webhook id/],
        ['{"1": ["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"]}', /at most two/],
        ['{"1": "short"}', /webhook 1, secret 1: a webhook secret must have at least 8/],
        ['[]', /invalid/],
      ] as const) {
        writeFileSync(file, content);
        expect(() => createSecretResolver({ secretsFile: file }), content).toThrow(why);
      }
    });
  });

  it('keeps the last good secrets when the file is broken while running, and never prints them', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 's.json');
      writeFileSync(file, JSON.stringify({ 7: ['current-secret-value', 'previous-secret-value'] }));
      let clock = 0;
      const r = createSecretResolver({ secretsFile: file, secret: new Secret('catch-all-secret-value'), reloadIntervalMs: 10, now: () => clock });
      expect(r.secretsFor(7).map((s) => s.reveal())).toEqual(['current-secret-value', 'previous-secret-value']);
      expect(r.secretsFor(8).map((s) => s.reveal())).toEqual(['catch-all-secret-value']);
      writeFileSync(file, '{"7": [');
      clock += 20;
      expect(r.secretsFor(7).map((s) => s.reveal())).toEqual(['current-secret-value', 'previous-secret-value']);
      expect(JSON.stringify(r.secretsFor(7))).not.toContain('current-secret-value');
      expect(JSON.stringify(r.describe())).toBe('{"fileWebhooks":1,"catchAll":true}');
    });
  });

  it('never quotes the file in an error or its cause: a secret outside quotes, in a key, or too long', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 's.json');
      const secret = 'kept-out-of-errors-0123456789';
      // JSON.parse's own message quotes the text at the fault ("my-secret"... is not valid JSON);
      // zod names a record key that fails in the path.
      for (const content of [`{"1": ${secret}}`, `${secret}`, `{"${secret}": "1"}`, `{"${secret}": "${secret}"}`, `{"1": ["${secret}${'x'.repeat(600)}"]}`]) {
        writeFileSync(file, content);
        for (const read of [() => createSecretResolver({ secretsFile: file }), () => readSecretsFile(file)]) {
          const e = thrown(read);
          expect((e as Error).message, content).toMatch(/webhook secrets file/);
          expect(everyRendering(e), content).not.toContain(secret.slice(0, 10));
        }
      }
    });
  });

  it('refuses a file over 1 MiB unread, at start, on register and on reload, naming the fix', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 's.json');
      const good = { 7: ['current-secret-value'] };
      // Valid JSON with secrets, padded past the limit: only the size can refuse it.
      writeFileSync(file, JSON.stringify(good).padEnd(MAX_SECRETS_FILE_BYTES + 1, ' '));
      expect(() => createSecretResolver({ secretsFile: file })).toThrow(/larger than 1 MiB.*webhooks register/);
      expect(() => readSecretsFile(file)).toThrow(/larger than 1 MiB/);
      writeFileSync(file, JSON.stringify(good).padEnd(MAX_SECRETS_FILE_BYTES, ' '));
      expect(readSecretsFile(file)).toEqual(new Map([[7, ['current-secret-value']]]));
      let clock = 0;
      const r = createSecretResolver({ secretsFile: file, reloadIntervalMs: 10, now: () => clock });
      writeFileSync(file, JSON.stringify({ 7: ['rotated-secret-value'] }).padEnd(MAX_SECRETS_FILE_BYTES + 1, ' '));
      clock += 20;
      expect(r.secretsFor(7).map((s) => s.reveal())).toEqual(['current-secret-value']);
    });
  });
});
